from weclaw_desktop.frozen import startup

startup()  # the bundle: multiprocessing workers run and exit here; children get the user's environment

from weclaw_desktop.cli import main  # noqa: E402

raise SystemExit(main())
