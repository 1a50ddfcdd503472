"""The fake OpenAI server in a process of its own (bench/ui.py's ``stream`` scenario).

In a thread of the measured process, the server's own work (making and writing thousands of chunks) holds
the GIL while the UI loop waits for it: stalls that a remote endpoint never causes. Here it runs apart, as
a real provider does. Protocol: prints its base URL on the first line of stdout; then each stdin line is a
base64 pickle of a tuple of ``fakeopenai.Reply`` objects to push (the scenario's scripted answers).
"""

from __future__ import annotations

import asyncio
import base64
import pickle
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]


async def main() -> None:
    from fakeopenai import FakeOpenAI

    fake = FakeOpenAI()
    await fake.start()
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    print(fake.base_url, flush=True)

    def read() -> None:
        for line in sys.stdin:
            replies = pickle.loads(base64.b64decode(line))  # from our own parent only
            loop.call_soon_threadsafe(fake.push, *replies)
        loop.call_soon_threadsafe(done.set)  # stdin closed: the bench is done

    threading.Thread(target=read, daemon=True).start()
    await done.wait()
    await fake.stop()


if __name__ == "__main__":
    asyncio.run(main())
