// The device's copy of Python's packages: every file of the wheels the boot
// installs (runtime.json's `preload`: numpy, matplotlib and what they need),
// already unpacked, in one file of the device's store (devicestore.js), kept
// beside the snapshot's copy (snapshot.js) once Python has been quiet a while.
// A later boot reads and checks it (35 MB) instead of having the service
// worker hand over 15 MB of wheels and inflating them on the worker's thread:
// in Chromium on a two-core laptop, their extension modules were the last
// thing the snapshot's restore waited for and their files the next (0.7 and
// 0.95 s into a second visit); from the copy, both are ready at 0.45 s.
//
// The file holds the files' bytes only, one after the other. What they must
// be comes from the build, never from the file: runtime.json's `packagesCopy`
// (py/deckbuild/devicecopy.py) lists each preload wheel's files with their
// sizes, in the order wheels.js unpacks them, and gives the SHA-256 of all
// their bytes. A copy is used only if its size and SHA-256 are those, checked
// on every read; anything else on the device (cut short, changed, another
// build's, written by someone else) is refused, and replaced once Python is
// quiet again. A copy is kept only if it is that one too.

import { computeIntegrity, keepFile } from "./snapshot.js";
import { DYNLIB } from "./wheels.js";

/** The copy's name in the device's store (devicestore.js). */
export const KEPT_PACKAGES = Object.freeze({ FILE: "dpdeck-python-packages.bin" });
/** Where the boot's packages came from (timings.packagesCopy.source). */
export const PACKAGES_SOURCE = Object.freeze({ KEPT: "kept", DOWNLOAD: "download" });

/** Why a device's copy of the packages was not used, in Spanish (timings.packagesCopy.refused). */
export const COPY_REFUSED = Object.freeze({
  SIZE: "no mide lo que dice runtime.json",
  DIGEST: "su SHA-256 no es el de runtime.json",
  UNREADABLE: "no se pudo leer",
});

/** Whether a path stays inside site-packages (no `..`, no leading `/`), as wheels.js requires of a wheel's. */
function isInside(path) {
  return typeof path === "string" && path !== "" && !path.startsWith("/") && !path.split("/").includes("..");
}

/**
 * Whether runtime.json's description (`packagesCopy`) can describe a copy of
 * `preload`'s wheels: one list of [path, size] per wheel, paths inside
 * site-packages, sizes that add up to its `size`.
 */
export function isUsableDescription(description, preload) {
  if (!description || typeof description.integrity !== "string" || !Array.isArray(description.wheels)) return false;
  if (description.wheels.length !== preload.length) return false;
  let total = 0;
  for (const wheel of description.wheels) {
    if (!wheel || !Array.isArray(wheel.files)) return false;
    for (const entry of wheel.files) {
      if (!Array.isArray(entry) || !isInside(entry[0]) || !Number.isInteger(entry[1]) || entry[1] < 0) return false;
      total += entry[1];
    }
  }
  return total === description.size;
}

/**
 * The copy to keep of `wheels` (wheels.js's unpackWheel results, in
 * runtime.json's order): the files' bytes copied into one buffer now, before
 * the boot gives them to Python's file system, which may change them.
 */
export function composePackagesCopy(wheels) {
  const size = wheels.reduce((total, wheel) => total + wheel.files.reduce((sum, { data }) => sum + data.byteLength, 0), 0);
  const data = new Uint8Array(size);
  let offset = 0;
  for (const wheel of wheels) {
    for (const file of wheel.files) {
      data.set(file.data, offset);
      offset += file.data.byteLength;
    }
  }
  return data;
}

/**
 * Keeps a composed copy (composePackagesCopy) as the device's copy in `store`
 * (devicestore.js, or a promise of it), whole or not at all, if it is the
 * one `description` (runtime.json's packagesCopy) gives; throws otherwise, and whatever the storage throws.
 */
export async function keepPackages(store, data, description) {
  if (data.byteLength !== description.size || (await computeIntegrity(data)) !== description.integrity) {
    throw new Error("los paquetes descargados no son los que describe runtime.json; no se guardan");
  }
  await keepFile(store, KEPT_PACKAGES.FILE, [data]);
}

/**
 * The wheels in the device's copy opened as `access` (openKeptFile's
 * read-only handle, closed here), as unpackWheel gives them ({name, files:
 * [{path, data}], dynlibs}, each file's data a view of the copy; names and
 * paths from `preload` and `description`): {wheels}, or {refused} (a
 * COPY_REFUSED reason) when the copy is not the one `description` gives.
 */
export async function readKeptPackages(access, preload, description) {
  let bytes;
  try {
    const size = access.getSize();
    if (size !== description.size) return { refused: COPY_REFUSED.SIZE };
    bytes = new Uint8Array(size);
    if (access.read(bytes, { at: 0 }) !== size) return { refused: COPY_REFUSED.UNREADABLE };
  } catch {
    return { refused: COPY_REFUSED.UNREADABLE };
  } finally {
    access.close();
  }
  if ((await computeIntegrity(bytes)) !== description.integrity) return { refused: COPY_REFUSED.DIGEST };
  let offset = 0;
  const wheels = preload.map(({ file }, index) => {
    const files = description.wheels[index].files.map(([path, size]) => {
      const data = bytes.subarray(offset, offset + size);
      offset += size;
      return { path, data };
    });
    return {
      name: file.slice(file.lastIndexOf("/") + 1),
      files,
      dynlibs: files.map(({ path }) => path).filter((path) => DYNLIB.test(path)),
    };
  });
  return { wheels };
}

/** Every extension module's bytes in `wheels`, and those of the files `alsoFiles` names, by path in site-packages (as unpackWheels' `libraries`). */
export function listLibraries(wheels, alsoFiles = []) {
  const libraries = new Map();
  const also = new Set(alsoFiles);
  for (const wheel of wheels) {
    const dynlibs = new Set(wheel.dynlibs);
    for (const { path, data } of wheel.files) if (dynlibs.has(path) || also.has(path)) libraries.set(path, data);
  }
  return libraries;
}
