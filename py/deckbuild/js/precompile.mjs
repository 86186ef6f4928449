// Runs Pyodide 0.27.7 under Node to turn Python archives into bytecode archives,
// so the bytecode carries exactly the magic number and the code objects of the
// interpreter that will load it in the browser.
//
//   node precompile.mjs JOBS.json REPORT.json   (deckbuild/precompile.py)
//
// JOBS.json: {
//   indexURL:   folder of the Pyodide core (pyodide.mjs, pyodide.asm.*, python_stdlib.zip),
//   lockFile:   a pyodide-lock.json whose packages are all in packageFolder (or null),
//   packageFolder: folder with those packages' files (or null),
//   packages:   packages to load first (those the font list needs),
//   program:    the Python file with run_jobs(jobs) (precompile_pyodide.py),
//   jobs:       [{input, output, kind: "zip" | "wheel", installPrefix, keepSources, fontList}]
// }
// Every file is read from and written to the host here; Python only sees the
// copies in its in-memory file system. Nothing is downloaded: a package that is
// not in packageFolder is an error, never a fetch from a CDN.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [jobsPath, reportPath] = process.argv.slice(2);
const request = JSON.parse(fs.readFileSync(jobsPath, "utf8"));
const log = [];

function checkPackagesPresent(lock, folder, names) {
  const wanted = new Set();
  const pending = [...names];
  while (pending.length) {
    const name = pending.pop();
    if (wanted.has(name)) continue;
    const entry = lock.packages[name];
    if (!entry) throw new Error(`el lock no tiene el paquete «${name}»`);
    wanted.add(name);
    pending.push(...entry.depends);
    if (!fs.existsSync(path.join(folder, entry.file_name))) {
      throw new Error(`falta ${entry.file_name} en ${folder} (no se descarga nada)`);
    }
  }
}

async function main() {
  const { loadPyodide } = await import(pathToFileURL(path.join(request.indexURL, "pyodide.mjs")).href);
  const options = {
    indexURL: request.indexURL,
    stdout: (text) => log.push(text),
    stderr: (text) => log.push(text),
  };
  if (request.lockFile) {
    checkPackagesPresent(JSON.parse(fs.readFileSync(request.lockFile, "utf8")), request.packageFolder, request.packages);
    options.lockFileURL = request.lockFile;
    options.packageCacheDir = request.packageFolder;
  }
  const pyodide = await loadPyodide(options);
  if (request.packages.length) {
    await pyodide.loadPackage(request.packages, { messageCallback: () => {}, errorCallback: (text) => log.push(text) });
  }
  const FS = pyodide.FS;
  FS.mkdirTree("/precompile/in");
  FS.mkdirTree("/precompile/out");
  const jobs = request.jobs.map((job, index) => {
    const input = `/precompile/in/${index}-${path.basename(job.input)}`;
    FS.writeFile(input, fs.readFileSync(job.input));
    return { ...job, input, output: `/precompile/out/${index}-${path.basename(job.output)}`, hostOutput: job.output };
  });
  pyodide.runPython(fs.readFileSync(request.program, "utf8"), { filename: request.program });
  const runJobs = pyodide.globals.get("run_jobs");
  const results = JSON.parse(runJobs(JSON.stringify(jobs)));
  runJobs.destroy();
  for (const job of jobs) {
    const temporary = `${job.hostOutput}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, FS.readFile(job.output));
    fs.renameSync(temporary, job.hostOutput);
  }
  const version = pyodide.runPython("import sys; sys.version.split()[0]");
  const magic = pyodide.runPython("import importlib.util; importlib.util.MAGIC_NUMBER.hex()");
  fs.writeFileSync(reportPath, JSON.stringify({ python: version, magic, results, log }));
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n${log.slice(-20).join("\n")}\n`);
  process.exit(1);
});
