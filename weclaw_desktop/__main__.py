from weclaw_desktop.cli import main

raise SystemExit(main())
