// Typesets TeX with KaTeX for the build (deckbuild/typeset.py).
//   node katex.js <path of the katex package>  < [[tex, display], …]  > [{html} | {error}, …]
const katex = require(process.argv[2]);
const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const items = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const results = items.map(([tex, display]) => {
    try {
      return {html: katex.renderToString(tex, {displayMode: display, throwOnError: true, strict: 'ignore'})};
    } catch (error) {
      return {error: String(error && error.message || error)};
    }
  });
  process.stdout.write(JSON.stringify(results));
});
