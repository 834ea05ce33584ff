from repolens.cli import main

raise SystemExit(main())
