"""Runs inside Pyodide 0.27.7 under Node (js/precompile.mjs), never on the host: archives to bytecode.

Each job rewrites one archive (the standard library's zip or a wheel):

* every ``.py`` is compiled by this interpreter to an *unchecked-hash* ``.pyc``
  (PEP 552): it is used as it is, whatever the files' times after unpacking
  (Pyodide unpacks wheels with the current time and never writes bytecode);
* without ``keep_sources`` the ``.pyc`` takes the ``.py``'s place (``mod.pyc``
  next to where ``mod.py`` was): smaller and loaded by the sourceless loaders,
  at the price of tracebacks without source lines inside those modules;
* with ``keep_sources`` the ``.py`` stays and the bytecode goes where the import
  system looks for it: ``__pycache__/mod.cpython-312.pyc`` on disk (wheels),
  ``mod.pyc`` beside ``mod.py`` in a zip (zipimport prefers it);
* code objects carry the path the module will have in the browser
  (``install_prefix`` + path in the archive), so a traceback names the real file;
* a file this interpreter cannot compile (a syntax of another Python) stays ``.py``;
* a wheel's ``RECORD`` is rewritten to list what the wheel now holds;
* ``font_list``: matplotlib's ``fontlist.json`` is replaced by one this
  interpreter's matplotlib builds and accepts (the one in Pyodide 0.27.7's wheel
  says ``_version`` 390, matplotlib 3.8.4 wants 330 and rebuilds it on every boot).

Members keep their order, times and permissions, so the output depends only on
the input and this interpreter.
"""

import base64
import hashlib
import importlib.util
import json
import os
import py_compile
import tempfile
import zipfile

FONT_LIST = "matplotlib/fontlist.json"
# A wheel's files smaller than this are stored, not deflated (choose_compression):
# three in four of them, for 2 MB more in all.
STORE_BELOW_BYTES = 16 * 1024


def build_font_list() -> bytes:
    """matplotlib's font list as its own FontManager writes it (fonts relative to mpl-data)."""
    from matplotlib import font_manager

    manager = font_manager.FontManager()
    # FontManager gathers the font files in a set, so its lists come in the
    # order of string hashes, which change with every interpreter start; sorted,
    # the file is the same on every build (and findfont's ties break the same way).
    for fonts in (manager.ttflist, manager.afmlist):
        fonts.sort(key=lambda font: (font.fname, font.name, font.style, str(font.weight)))
    with tempfile.TemporaryDirectory() as folder:
        target = os.path.join(folder, "fontlist.json")
        font_manager.json_dump(manager, target)
        with open(target, "rb") as handle:
            return handle.read()


def compile_source(source: bytes, display_path: str, scratch: str) -> bytes:
    """Unchecked-hash bytecode of one module; raises py_compile.PyCompileError."""
    source_path = os.path.join(scratch, "module.py")
    bytecode_path = os.path.join(scratch, "module.pyc")
    with open(source_path, "wb") as handle:
        handle.write(source)
    py_compile.compile(source_path, cfile=bytecode_path, dfile=display_path, doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    with open(bytecode_path, "rb") as handle:
        return handle.read()


def bytecode_name(name: str, *, keep_sources: bool, kind: str) -> str:
    if keep_sources and kind == "wheel":
        return importlib.util.cache_from_source(name)
    return name[:-3] + ".pyc"


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_record(members: list, record_name: str) -> bytes:
    lines = [f"{info.filename},{record_hash(data)},{len(data)}\n"
             for info, data in members if info.filename != record_name]
    lines.append(f"{record_name},,\n")
    return "".join(lines).encode()


def choose_compression(kind: str, data: bytes) -> int:
    """Stored or deflated: the worker inflates a wheel's files one by one (deck/js/worker/wheels.js), and a
    small file costs more to start inflating than it saves in bytes; zipimport reads the standard
    library's archive, where every file stays deflated."""
    return zipfile.ZIP_STORED if kind == "wheel" and len(data) < STORE_BELOW_BYTES else zipfile.ZIP_DEFLATED


def derive_info(template: zipfile.ZipInfo, name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=template.date_time)
    info.external_attr = template.external_attr
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def recompile_archive(job: dict, font_list: bytes | None) -> dict:
    """Write job["output"]: job["input"] with bytecode; return what was done."""
    kind, keep_sources = job["kind"], job["keepSources"]
    prefix = job["installPrefix"].rstrip("/")
    members, compiled, not_compiled = [], 0, []
    record_name = None
    with zipfile.ZipFile(job["input"]) as archive, tempfile.TemporaryDirectory() as scratch:
        for info in archive.infolist():
            data = archive.read(info)
            name = info.filename
            if kind == "wheel" and name.endswith(".dist-info/RECORD"):
                record_name = name
            if name == FONT_LIST and font_list is not None:
                data = font_list
            if not name.endswith(".py"):
                members.append((derive_info(info, name), data))
                continue
            try:
                bytecode = compile_source(data, f"{prefix}/{name}", scratch)
            except py_compile.PyCompileError:
                not_compiled.append(name)
                members.append((derive_info(info, name), data))
                continue
            compiled += 1
            if keep_sources:
                members.append((derive_info(info, name), data))
            members.append((derive_info(info, bytecode_name(name, keep_sources=keep_sources, kind=kind)), bytecode))
    if record_name is not None:
        template = next(info for info, _ in members if info.filename == record_name)
        members = [(info, data) for info, data in members if info.filename != record_name]
        members.append((template, make_record(members, record_name)))
    with zipfile.ZipFile(job["output"], "w") as archive:
        for info, data in members:
            info.compress_type = choose_compression(kind, data)
            archive.writestr(info, data, compresslevel=9)
    return {"compiled": compiled, "notCompiled": not_compiled,
            "fontList": font_list is not None and any(info.filename == FONT_LIST for info, _ in members)}


def run_jobs(jobs_json: str) -> str:
    """Entry point called from Node with the jobs as JSON; returns one result per job as JSON."""
    jobs = json.loads(jobs_json)
    font_list = build_font_list() if any(job.get("fontList") for job in jobs) else None
    results = []
    for job in jobs:
        results.append(recompile_archive(job, font_list if job.get("fontList") else None))
    return json.dumps(results)
