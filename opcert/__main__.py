from opcert.cli import main

raise SystemExit(main())
