"""The dpdeck build, one stage per module (see ARCHITECTURE.md).

    pins        the pin table: every outside file, by version and SHA-256
    fetch       verified downloads, cached by SHA-256
    pyodide     Pyodide's core and the wheels the deck ships, checked against its lock
    precompile  those archives (and the dpdeck wheel) as bytecode, compiled by Pyodide itself
    markdown    the slides' Markdown dialect (markdown-it)
    deckmodel   the `Deck`/`Slide`/`Cell` records and the names of the format's parts
    slides      Markdown → those records (the one reader)
    typeset     formulas, with KaTeX
    prerender   every cell run with native Python, cached by hash
    render      the page: reveal.js sections and cells with their output
    package     esbuild bundles, the dpdeck wheel, shipped files, the manifest
    pipeline    the build in order, in a temporary folder
    server      the server: COOP/COEP, ETag, nosniff, the page's CSP; odd requests get a status
    browser     where the tests' Chromium is
    bench       `build.py bench`: the deck's boot against a plain Pyodide page, in Chromium
    bench_links `build.py bench --link/--class`: the same through a shared link, a whole class at once

`paths`, `errors`, `files`, `commands`, `pins` and `server` use the standard
library only: build.py imports them before .venv exists. This package never ships to the
browser: the deck's wheel holds `dpdeck` alone.
"""
