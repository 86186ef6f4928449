"""La construcción del mazo dpdeck, por etapas (ver ARCHITECTURE.md).

    pins        la tabla de versiones: cada archivo de fuera, con su SHA-256
    fetch       descargas verificadas y su caché por SHA-256
    pyodide     el núcleo de Pyodide y las ruedas que se envían, contra su lock
    markdown    el dialecto Markdown de las diapositivas (markdown-it)
    slides      Markdown → registros `Deck`/`Slide`/`Cell` (el único lector)
    typeset     las fórmulas, con KaTeX
    prerender   cada celda ejecutada con Python nativo, con caché por hash
    render      la página: secciones de reveal.js y celdas con su salida
    package     paquetes de esbuild, la rueda dpdeck, el manifiesto
    pipeline    la construcción en orden, en una carpeta temporal
    server      el servidor de desarrollo (COOP/COEP, ETag)
    browser     dónde está el Chromium de las pruebas

`paths`, `errors`, `files` y `commands` usan solo la biblioteca estándar: build.py
los importa antes de que exista .venv. Este paquete no se envía al navegador:
la rueda del mazo lleva solo `dpdeck`.
"""
