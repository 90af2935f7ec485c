from taskmem.cli import main

raise SystemExit(main())
