"""The interpreter's own data, read from pyodide.asm.wasm: what instantiating it writes into memory.

A snapshot of Python's memory holds, at the main module's memory base, the
bytes of its data segment (most of them unchanged since instantiation). The
page downloads those bytes anyway, inside pyodide.asm.wasm, and instantiating
the module writes them into memory before anything runs; so the shipped
snapshot carries them XOR-ed out (snapshot.py), and the worker puts them back
from the memory it just instantiated (deck/js/worker/snapshot.js).

Binary format: WebAssembly Core Specification 2.0, §5.5 (modules): sections
are (id, LEB128 size, contents); imports (§5.5.5) and data (§5.5.12) are
vectors; an active segment's offset is a constant expression (§5.4.9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import BuildError

WASM_MAGIC = b"\0asm\x01\0\0\0"
SECTION = {"import": 2, "data": 11}
IMPORT_KIND_GLOBAL = 3
OPCODE = {"i32.const": 0x41, "global.get": 0x23, "end": 0x0B}
# Emscripten's loader gives a main module its memory base as an immutable global import of this name.
MEMORY_BASE_IMPORT = "__memory_base"
MEMORY_BASE_IN_LOADER = re.compile(
    r"__memory_base\s*=\s*new WebAssembly\.Global\(\{[^}]*\}\s*,\s*(\d+)\)")


@dataclass(frozen=True)
class MainData:
    """The main module's one data segment: where instantiating writes it, and its bytes."""

    address: int
    data: bytes


class WasmReader:
    """Reads unsigned LEB128 numbers and names from a module's bytes, naming the file when they end too soon."""

    def __init__(self, data: bytes, source: str, offset: int = 0):
        self.data, self.source, self.offset = data, source, offset

    def byte(self) -> int:
        if self.offset >= len(self.data):
            raise BuildError(f"{self.source}: el módulo WebAssembly termina antes de tiempo (byte {self.offset})")
        value = self.data[self.offset]
        self.offset += 1
        return value

    def unsigned(self) -> int:
        value = shift = 0
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    def take(self, size: int) -> bytes:
        if self.offset + size > len(self.data):
            raise BuildError(f"{self.source}: el módulo WebAssembly termina antes de tiempo (byte {self.offset})")
        chunk = self.data[self.offset:self.offset + size]
        self.offset += size
        return chunk

    def name(self) -> str:
        return self.take(self.unsigned()).decode("utf-8", errors="replace")


def list_sections(module: bytes, source: str) -> dict[int, bytes]:
    """The module's sections by id (a custom section, id 0, may repeat: the last is kept, none is used here)."""
    if module[:8] != WASM_MAGIC:
        raise BuildError(f"{source}: no es un módulo WebAssembly 1.0")
    reader, sections = WasmReader(module, source, 8), {}
    while reader.offset < len(module):
        section_id = reader.byte()
        sections[section_id] = reader.take(reader.unsigned())
    return sections


def list_global_imports(section: bytes, source: str) -> list[str]:
    """The names of the imported globals, in index order (global.get k names the k-th)."""
    reader, names = WasmReader(section, source), []
    for _ in range(reader.unsigned()):
        reader.name()
        field = reader.name()
        kind = reader.byte()
        if kind == 0:                      # a function: its type index
            reader.unsigned()
        elif kind == 1:                    # a table: element type, limits
            reader.byte()
            read_limits(reader)
        elif kind == 2:                    # a memory: limits
            read_limits(reader)
        elif kind == IMPORT_KIND_GLOBAL:   # a global: value type, mutability
            reader.take(2)
            names.append(field)
        else:
            raise BuildError(f"{source}: importación de tipo desconocido {kind}")
    return names


def read_limits(reader: WasmReader) -> None:
    flags = reader.byte()
    reader.unsigned()
    if flags & 1:
        reader.unsigned()


def read_main_data(wasm_path: Path, loader_path: Path) -> MainData:
    """The data segment of pyodide.asm.wasm and the address its loader (pyodide.asm.js) writes it at.

    Pyodide's main module has exactly one active segment, placed at
    `global.get __memory_base`; anything else is a Pyodide this build does not
    know, and the build stops rather than guess.
    """
    source = wasm_path.name
    sections = list_sections(wasm_path.read_bytes(), source)
    if SECTION["data"] not in sections:
        raise BuildError(f"{source}: no tiene sección de datos")
    reader = WasmReader(sections[SECTION["data"]], source)
    if reader.unsigned() != 1:
        raise BuildError(f"{source}: se esperaba un solo segmento de datos")
    if reader.unsigned() != 0 or reader.byte() != OPCODE["global.get"]:
        raise BuildError(f"{source}: el segmento de datos no se coloca en la base de memoria")
    global_index = reader.unsigned()
    if reader.byte() != OPCODE["end"]:
        raise BuildError(f"{source}: la dirección del segmento de datos no es una expresión simple")
    data = reader.take(reader.unsigned())
    imports = list_global_imports(sections.get(SECTION["import"], b"\0"), source)
    if global_index >= len(imports) or imports[global_index] != MEMORY_BASE_IMPORT:
        raise BuildError(f"{source}: el segmento de datos no se coloca en {MEMORY_BASE_IMPORT}")
    found = MEMORY_BASE_IN_LOADER.search(loader_path.read_text(encoding="utf-8", errors="replace"))
    if not found:
        raise BuildError(f"{loader_path.name}: no dice el valor de {MEMORY_BASE_IMPORT}")
    return MainData(address=int(found.group(1)), data=data)
