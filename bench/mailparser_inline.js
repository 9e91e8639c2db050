// mailparser's side of bench/inline.sh: each file named on the command line parsed with
// simpleParser, which turns cid: references in the HTML into data: URIs (its default,
// keepCidLinksInHtml false); the HTML written to standard output, as mimeuri writes its
// message. A file mailparser fails on is counted, not fatal. mailparser comes from
// bench/.node (installed there by bench/inline.sh, never into the repository's files).
'use strict';
const path = require('path');
const fs = require('fs');
const { simpleParser } = require(path.join(__dirname, '.node', 'node_modules', 'mailparser'));

(async () => {
  let failed = 0;
  for (const f of process.argv.slice(2)) {
    try {
      const m = await simpleParser(fs.readFileSync(f));
      if (typeof m.html === 'string') process.stdout.write(m.html);
    } catch (e) {
      failed++;
    }
  }
  if (failed) process.stderr.write(`mailparser: ${failed} files failed\n`);
})();
