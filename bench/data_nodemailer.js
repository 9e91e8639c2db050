// nodemailer's attachDataUrls over each HTML file named: each message built with the stream
// transport (what sendMail does before the wire), then, untimed, read back with mailparser
// to count the data: images left in its HTML and the parts it made. Prints one line: files,
// data: images left, parts, seconds (building only). TIME_ONLY=1: the building alone.
const nodemailer = require('nodemailer');
const { simpleParser } = require('mailparser');
const fs = require('fs');
(async () => {
  const t = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const files = process.argv.slice(2);
  const built = [];
  const t0 = process.hrtime.bigint();
  for (const f of files) {
    const info = await t.sendMail({ from: 'bench@example.org', to: 'you@example.net', subject: 'page',
      html: fs.readFileSync(f, 'utf8'), attachDataUrls: true });
    built.push(info.message);
  }
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  if (process.env.TIME_ONLY) return;
  let left = 0, parts = 0;
  for (const m of built) {
    const p = await simpleParser(m, { keepCidLinks: true });
    left += ((p.html || '').match(/data:image\//gi) || []).length;
    parts += p.attachments.length;
  }
  console.log(`${files.length} ${left} ${parts} ${secs.toFixed(3)}`);
})();
