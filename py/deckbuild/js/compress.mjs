// Writes the compressed copies of the deck's files (deckbuild/compress.py):
// reads [{source, br, gzip}] on stdin, writes each source's brotli copy to
// `br` and its gzip copy to `gzip`. Node's own zlib, the same on every
// machine, so the build stays reproducible: brotli at quality 11 with a
// 16 MB window (browsers decode windows up to that size), gzip at level 9
// with no name or time in its header. Each copy depends only on its source,
// so copies are made side by side, one per core (zlib's asynchronous calls
// run on libuv's thread pool), the largest first.

import fs from "node:fs";
import os from "node:os";
import { promisify } from "node:util";
import zlib from "node:zlib";

const BROTLI_QUALITY = 11;
const BROTLI_WINDOW_BITS = 24;
const GZIP_LEVEL = 9;

const brotliCompress = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

async function compressOne(job) {
  const source = await fs.promises.readFile(job.source);
  const brotli = await brotliCompress(source, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.constants.BROTLI_PARAM_LGWIN]: BROTLI_WINDOW_BITS,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: source.length,
    },
  });
  await fs.promises.writeFile(job.br, brotli);
  await fs.promises.writeFile(job.gzip, await gzip(source, { level: GZIP_LEVEL }));
}

const jobs = JSON.parse(fs.readFileSync(0, "utf8"));
const waiting = jobs.toSorted((one, other) => fs.statSync(other.source).size - fs.statSync(one.source).size);
const lanes = Math.max(1, Math.min(os.availableParallelism(), waiting.length));
await Promise.all(Array.from({ length: lanes }, async () => {
  while (waiting.length > 0) await compressOne(waiting.shift());
}));
