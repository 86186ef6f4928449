// The device's copy of Python's packages: every file of the wheels the boot
// installs (runtime.json's `preload`: numpy, matplotlib and what they need),
// already unpacked, in one file of the origin's private file system, kept
// beside the snapshot's copy (snapshot.js) once Python has been quiet a while.
// A later boot reads and checks it (35 MB) instead of having the service
// worker hand over 15 MB of wheels and inflating them on the worker's thread:
// in Chromium on a two-core laptop, their extension modules were the last
// thing the snapshot's restore waited for and their files the next (0.7 and
// 0.95 s into a second visit); from the copy, both are ready at 0.45 s.
//
// The file: a 32-bit little-endian length, a JSON header of that length,
// then each file's bytes in the header's order. The header:
//   {version, wheels: [{file, integrity, name, dynlibs, files: [[path, size]]}], integrity}
// `file` and `integrity` are the preload entries the wheels were unpacked
// from (a copy is used only for the same wheels, in the same order);
// `integrity` is the Subresource Integrity value (SHA-256) of all the files'
// bytes, computed when the copy was made, from the wheels as they were
// checked and unpacked, and checked on every read: a copy cut short, changed
// on the device or of other wheels is never used.

import { computeIntegrity, keepFile } from "./snapshot.js";

/** The copy's name in the origin's private file system, and its layout's version. */
export const KEPT_PACKAGES = Object.freeze({ FILE: "dpdeck-python-packages.bin", VERSION: 1 });
/** Where the boot's packages came from (timings.packagesCopy.source). */
export const PACKAGES_SOURCE = Object.freeze({ KEPT: "kept", DOWNLOAD: "download" });

const LENGTH_BYTES = 4;

/**
 * The copy to keep of `wheels` (wheels.js's unpackWheel results) unpacked
 * from `preload` (runtime.json's entries, in the same order):
 * {header, data}, the files' bytes copied into one buffer now, before the
 * boot gives them to Python's file system, which may change them.
 */
export function composePackagesCopy(preload, wheels) {
  const size = wheels.reduce((total, wheel) => total + wheel.files.reduce((sum, { data }) => sum + data.byteLength, 0), 0);
  const data = new Uint8Array(size);
  let offset = 0;
  const entries = wheels.map((wheel, index) => {
    for (const file of wheel.files) {
      data.set(file.data, offset);
      offset += file.data.byteLength;
    }
    return {
      file: preload[index].file,
      integrity: preload[index].integrity,
      name: wheel.name,
      dynlibs: wheel.dynlibs,
      files: wheel.files.map(({ path, data: bytes }) => [path, bytes.byteLength]),
    };
  });
  return { header: { version: KEPT_PACKAGES.VERSION, wheels: entries }, data };
}

/**
 * Keeps a composed copy (composePackagesCopy) as the device's copy, whole or
 * not at all; its SHA-256 is computed here. Throws what the storage throws.
 */
export async function keepPackages(storage, { header, data }) {
  const text = new TextEncoder().encode(JSON.stringify({ ...header, integrity: await computeIntegrity(data) }));
  const length = new Uint8Array(LENGTH_BYTES);
  new DataView(length.buffer).setUint32(0, text.byteLength, true);
  await keepFile(storage, KEPT_PACKAGES.FILE, [length, text, data]);
}

function sameWheels(entries, preload) {
  return (
    Array.isArray(entries) &&
    entries.length === preload.length &&
    entries.every((entry, index) => entry.file === preload[index].file && entry.integrity === preload[index].integrity)
  );
}

/**
 * The wheels in the device's copy opened as `access` (openKeptFile's read-only
 * handle, closed here), as unpackWheel gives them ({name, files: [{path,
 * data}], dynlibs}, each file's data a view of the copy), if the copy is of
 * `preload`'s wheels and its SHA-256 holds; null otherwise.
 */
export async function readKeptPackages(access, preload) {
  let bytes;
  try {
    bytes = new Uint8Array(access.getSize());
    if (access.read(bytes, { at: 0 }) !== bytes.byteLength) return null;
  } catch {
    return null;
  } finally {
    access.close();
  }
  if (bytes.byteLength < LENGTH_BYTES) return null;
  const headerEnd = LENGTH_BYTES + new DataView(bytes.buffer).getUint32(0, true);
  if (headerEnd > bytes.byteLength) return null;
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(LENGTH_BYTES, headerEnd)));
  } catch {
    return null;
  }
  if (!header || header.version !== KEPT_PACKAGES.VERSION || !sameWheels(header.wheels, preload)) return null;
  const data = bytes.subarray(headerEnd);
  let offset = 0;
  const wheels = [];
  for (const { name, dynlibs, files } of header.wheels) {
    if (!Array.isArray(files) || !Array.isArray(dynlibs)) return null;
    const unpacked = [];
    for (const [path, size] of files) {
      if (!Number.isInteger(size) || size < 0 || offset + size > data.byteLength) return null;
      unpacked.push({ path, data: data.subarray(offset, offset + size) });
      offset += size;
    }
    wheels.push({ name, files: unpacked, dynlibs });
  }
  if (offset !== data.byteLength) return null;
  if ((await computeIntegrity(data)) !== header.integrity) return null;
  return wheels;
}

/** Every extension module's bytes in `wheels`, by path in site-packages (as unpackWheels' `libraries`). */
export function listLibraries(wheels) {
  const libraries = new Map();
  for (const wheel of wheels) {
    const dynlibs = new Set(wheel.dynlibs);
    for (const { path, data } of wheel.files) if (dynlibs.has(path)) libraries.set(path, data);
  }
  return libraries;
}
