// What nodemailer's mailparser and postal-mime see of each message named on the command line:
// one JSON line per message and reader, {reader, file, attachments: [{cid, disposition,
// related, type, sha256}], html}; mailparser's also shown, its HTML with the cid: links it
// resolves inlined (simpleParser's default). Run by data_readers.py with NODE_PATH set to the folder
// the suite installed them into (test tools only).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { simpleParser } = require('mailparser');
const PostalMime = (await import(path.join(process.env.NODE_PATH, 'postal-mime', 'src', 'postal-mime.js'))).default;
const sha = (b) => createHash('sha256').update(Buffer.from(b)).digest('hex');

for (const file of process.argv.slice(2)) {
  const bytes = readFileSync(file);
  // keepCidLinks: the HTML as the message has it (mailparser otherwise inlines cid: parts).
  const m = await simpleParser(bytes, { keepCidLinks: true });
  // And as the webmails built on it show it: the cid: links it resolves made data: URLs.
  const shown = await simpleParser(bytes);
  console.log(JSON.stringify({
    reader: 'mailparser', file, html: m.html || '', shown: shown.html || '',
    attachments: m.attachments.map((a) => ({ cid: a.contentId || a.cid || '', disposition: a.contentDisposition,
      related: !!a.related, type: a.contentType, sha256: sha(a.content) })),
  }));
  const p = await PostalMime.parse(bytes);
  console.log(JSON.stringify({
    reader: 'postal-mime', file, html: p.html || '',
    attachments: p.attachments.map((a) => ({ cid: a.contentId || '', disposition: a.disposition,
      related: !!a.related, type: a.mimeType, sha256: sha(typeof a.content === 'string' ? a.content : new Uint8Array(a.content)) })),
  }));
}
