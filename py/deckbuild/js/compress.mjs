// Writes the compressed copies of the deck's files (deckbuild/compress.py):
// reads [{source, br, gzip}] on stdin, writes each source's brotli copy to
// `br` and its gzip copy to `gzip`. Node's own zlib, the same on every
// machine, so the build stays reproducible: brotli at quality 11 with a
// 16 MB window (browsers decode windows up to that size), gzip at level 9
// with no name or time in its header.

import fs from "node:fs";
import zlib from "node:zlib";

const BROTLI_QUALITY = 11;
const BROTLI_WINDOW_BITS = 24;
const GZIP_LEVEL = 9;

const jobs = JSON.parse(fs.readFileSync(0, "utf8"));
for (const job of jobs) {
  const source = fs.readFileSync(job.source);
  const brotli = zlib.brotliCompressSync(source, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.constants.BROTLI_PARAM_LGWIN]: BROTLI_WINDOW_BITS,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: source.length,
    },
  });
  fs.writeFileSync(job.br, brotli);
  fs.writeFileSync(job.gzip, zlib.gzipSync(source, { level: GZIP_LEVEL }));
}
