// Bundles the page's JS and CSS with esbuild for the build (deckbuild/package.py).
//   node esbuild.js <path of the esbuild package> '[{source, target, format, root}, …]'
// Prints the sorted list of every input file, so the build can check each npm
// package it pulled in against the pin table. Fonts stay where the stylesheet
// says (url("../fonts/…"), relative to dist/css/): the build ships them itself.
const esbuild = require(process.argv[2]);
const jobs = JSON.parse(process.argv[3]);
(async () => {
  const inputs = new Set();
  for (const job of jobs) {
    const options = {
      entryPoints: [job.source], outfile: job.target, bundle: true, minify: true,
      legalComments: 'eof', charset: 'utf8', logLevel: 'silent', metafile: true,
      absWorkingDir: job.root, target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
      external: ['*.woff2'],
    };
    if (job.format) options.format = job.format;
    const result = await esbuild.build(options);
    for (const input of Object.keys(result.metafile.inputs)) inputs.add(input);
  }
  process.stdout.write(JSON.stringify([...inputs].sort()));
})().catch((error) => {
  const messages = (error.errors || []).map((m) => (m.location ? `${m.location.file}:${m.location.line}: ` : '') + m.text);
  process.stderr.write((messages.length ? messages.join('\n') : String(error)) + '\n');
  process.exit(1);
});
