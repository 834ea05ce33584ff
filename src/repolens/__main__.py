from repolens.cli import main

# Guarded: worker processes (spawned, see repolens.index.prepare) import the main
# module under another name and must not run the command again.
if __name__ == "__main__":
    raise SystemExit(main())
