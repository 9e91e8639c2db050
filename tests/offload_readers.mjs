// What nodemailer's mailparser and postal-mime show of each message named on the command
// line: one JSON line per message and reader, {reader, file, text, attachments: [{filename,
// type}]}. Run by offload_readers.py with NODE_PATH set to the folder the suite installed
// them into (test tools only).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const { simpleParser } = require('mailparser');
const PostalMime = (await import(path.join(process.env.NODE_PATH, 'postal-mime', 'src', 'postal-mime.js'))).default;

for (const file of process.argv.slice(2)) {
  const bytes = readFileSync(file);
  const m = await simpleParser(bytes);
  console.log(JSON.stringify({ reader: 'mailparser', file, text: m.text || '',
    attachments: m.attachments.map((a) => ({ filename: a.filename || '', type: a.contentType })) }));
  const p = await PostalMime.parse(bytes);
  console.log(JSON.stringify({ reader: 'postal-mime', file, text: p.text || '',
    attachments: p.attachments.map((a) => ({ filename: a.filename || '', type: a.mimeType })) }));
}
