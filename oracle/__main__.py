from oracle.cli import main

raise SystemExit(main())
