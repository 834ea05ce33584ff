from repolens.cli import main

# ``python -m repolens.cli``, as ``python -m repolens``.
if __name__ == "__main__":
    raise SystemExit(main())
