// Opens pages mimeuri made in headless Chromium, as files, with the network off, and says
// what each one shows: every <img> (complete && naturalWidth > 0), every stylesheet <link>
// (a parsed sheet), and each image a CSS url() or a background attribute names (probed).
// Usage: node check_pages.mjs MANIFEST.json RESULTS.json
// MANIFEST: {"chromium": PATH, "pages": [{"id", "path", "files": [names] | null}], "shots": DIR}
// "files": the extracted files beside an extract page (those are mimeuri's references there);
// null for an inline page (its data: URLs are). RESULTS: one entry per page.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { start } from './launch.mjs';

const { manifest, resultsPath, browser } = await start();

const results = [];
for (const p of manifest.pages) {
  const page = await browser.newPage();
  const blocked = [];
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    const u = req.url();
    if (u.startsWith('file:') || u.startsWith('data:')) req.continue();
    else {
      blocked.push(u.slice(0, 120));
      req.abort();
    }
  });
  let error = null;
  try {
    await page.goto(pathToFileURL(p.path).href, { waitUntil: 'load', timeout: 20000 });
    // Lazy images below the fold would never load in a headless window: load them now.
    await page.evaluate(async () => {
      const waits = [];
      for (const img of document.images) {
        if (img.loading === 'lazy') img.loading = 'eager';
        if (!img.complete)
          waits.push(new Promise((r) => { img.addEventListener('load', r); img.addEventListener('error', r); setTimeout(r, 5000); }));
      }
      await Promise.all(waits);
    });
  } catch (e) {
    error = String(e).slice(0, 300);
  }
  let shown = null;
  if (!error) {
    try {
      // First the linked sheets the page cannot read (file: ones); node reads their text.
      const opaque = await page.evaluate(() => {
        const out = [];
        const walk = (sheet, depth) => {
          try {
            for (const rule of sheet.cssRules) if (rule.styleSheet && depth < 8) walk(rule.styleSheet, depth + 1);
          } catch (e) { if (sheet.href) out.push(sheet.href); }
        };
        for (const l of document.querySelectorAll('link')) if (/(^|\s)stylesheet(\s|$)/i.test(l.rel) && l.sheet) walk(l.sheet, 0);
        return out;
      });
      const extra = new Set();
      const readSheet = (href, depth) => {
        if (!href.startsWith('file:') || depth > 8) return;
        let text;
        try { text = readFileSync(fileURLToPath(href.split(/[?#]/)[0]), 'utf8'); } catch (e) { return; }
        const add = (ref) => {
          let abs;
          try { abs = new URL(ref, href).href; } catch (e) { return; }
          if (/\.css([?#]|$)/i.test(abs)) readSheet(abs, depth + 1); // @import url(...)
          else extra.add(abs);
        };
        for (const m of text.matchAll(/url\(\s*(['"]?)([^'")]+)\1\s*\)/g)) add(m[2]);
        for (const m of text.matchAll(/@import\s+(['"])([^'"]+)\1/g)) add(m[2]);
      };
      for (const href of opaque) readSheet(href, 0);
      shown = await page.evaluate(async (files, extraSheetUrls) => {
        const here = new URL('.', location.href).href;
        // mimeuri's references on this page: data: URLs (inline), or the files beside it (extract).
        const ours = (u) => {
          if (!u) return false;
          if (files === null) return u.startsWith('data:');
          if (!u.startsWith(here)) return false;
          const name = decodeURIComponent(u.slice(here.length).split(/[?#]/)[0]);
          return files.includes(name);
        };
        const short = (u) => (u || '').slice(0, 100);
        const imgs = [...document.images].map((img) => {
          const u = img.currentSrc || img.src;
          return { url: short(u), ours: ours(u), ok: img.complete && img.naturalWidth > 0 };
        });
        const sheets = [...document.querySelectorAll('link')]
          .filter((l) => /(^|\s)stylesheet(\s|$)/i.test(l.rel))
          .map((l) => {
            let rules = null;
            try { rules = l.sheet ? l.sheet.cssRules.length : null; } catch (e) { rules = 'opaque'; }
            return { url: short(l.href), ours: ours(l.href), ok: !!l.sheet, rules };
          });
        // Images named by CSS url() in style attributes and <style>, and background attributes.
        const urls = new Set();
        const grab = (text) => {
          for (const m of (text || '').matchAll(/url\(\s*(['"]?)([^'")]+)\1\s*\)/g)) urls.add(new URL(m[2], location.href).href);
        };
        for (const el of document.querySelectorAll('[style]')) grab(el.getAttribute('style'));
        for (const st of document.querySelectorAll('style')) grab(st.textContent);
        for (const el of document.querySelectorAll('[background]')) urls.add(new URL(el.getAttribute('background'), location.href).href);
        // Images named by url() inside the linked stylesheets (and the sheets they @import),
        // resolved against each sheet's own URL: probed apart, as sheetImages.
        const sheetUrls = new Set();
        const opaqueSheets = [];
        const walk = (sheet, depth) => {
          let rules;
          // A sheet opened from a file: is cross-origin to the page (file: origins are
          // opaque): its text is read from the file by node below.
          try { rules = sheet.cssRules; } catch (e) { opaqueSheets.push(sheet.href); return; }
          const base = sheet.href || location.href;
          for (const rule of rules) {
            if (rule.styleSheet && depth < 8) walk(rule.styleSheet, depth + 1); // @import
            if (rule.cssRules && !rule.style) for (const inner of rule.cssRules) if (inner.style) grabIn(inner.style.cssText, base);
            if (rule.style) grabIn(rule.style.cssText, base);
          }
        };
        const grabIn = (text, base) => {
          for (const m of (text || '').matchAll(/url\(\s*(['"]?)([^'")]+)\1\s*\)/g)) {
            try { sheetUrls.add(new URL(m[2], base).href); } catch (e) { /* not a URL */ }
          }
        };
        for (const l of document.querySelectorAll('link')) if (/(^|\s)stylesheet(\s|$)/i.test(l.rel) && l.sheet) walk(l.sheet, 0);
        // An image URL loaded alone: whether it shows. Only image URLs (a data:image/ one, or a
        // name with an image's extension) are probed.
        const image = (u) => (u.startsWith('data:') ? u.startsWith('data:image/')
                                                     : /\.(png|jpe?g|gif|webp|bmp|ico|avif|svg)([?#]|$)/i.test(u));
        const probe = (u, mine) => new Promise((r) => {
          const im = new Image();
          im.onload = () => r({ url: short(u), ours: mine, ok: im.naturalWidth > 0 });
          im.onerror = () => r({ url: short(u), ours: mine, ok: false });
          setTimeout(() => r({ url: short(u), ours: mine, ok: false }), 5000);
          im.src = u;
        });
        const sheetProbes = [...sheetUrls, ...extraSheetUrls].filter(image).map((u) => probe(u, ours(u)));
        const probes = [];
        // Probed: mimeuri's image URLs, and the page's own data: images (counted as shown on
        // both pages alike, so that the inline and extract pages compare).
        for (const u of urls) {
          const mine = ours(u);
          if (!mine && !u.startsWith('data:image/')) continue;
          if (image(u)) probes.push(probe(u, mine));
        }
        return { imgs, sheets, backgrounds: await Promise.all(probes), sheetImages: await Promise.all(sheetProbes), opaqueSheets: opaqueSheets.length };
      }, p.files, [...extra]);
    } catch (e) {
      error = String(e).slice(0, 300);
    }
  }
  results.push({ id: p.id, path: p.path, error, shown, blocked: blocked.length });
  const bad = error || (shown && [...shown.imgs, ...shown.sheets, ...shown.backgrounds, ...shown.sheetImages].some((x) => x.ours && !x.ok));
  if (bad && manifest.shots && results.filter((r) => r.shot).length < 3) {
    const shot = `${manifest.shots}/browser-${results.length}.png`;
    try {
      await page.screenshot({ path: shot, fullPage: false });
      results[results.length - 1].shot = shot;
    } catch (e) { /* a page that cannot be drawn: its error says enough */ }
  }
  await page.close();
}
// An extracted archive (manifest.archive: {"root": DIR, "start": NAME}): every page reached
// from DIR/NAME (index.html by default) through links, each link followed. For each page:
// its mid: URLs left as they were, and every other link, image or stylesheet naming a
// file: whether that file exists, stays inside DIR and loads (a page: opened in the
// browser; an image: shown).
let archive = null;
if (manifest.archive) {
  const root = manifest.archive.root.replace(/\/$/, '');
  const rootUrl = pathToFileURL(root).href + '/';
  const queue = [pathToFileURL(root + '/' + (manifest.archive.start || 'index.html')).href];
  const seen = new Set(queue);
  archive = { pages: [], links: [] };
  while (queue.length) {
    const url = queue.shift();
    const page = await browser.newPage();
    await page.setRequestInterception(true);
    page.on('request', (req) => (req.url().startsWith('file:') || req.url().startsWith('data:') ? req.continue() : req.abort()));
    let error = null, found = null;
    try {
      if (!existsSync(fileURLToPath(url))) throw new Error('no such file');
      await page.goto(url, { waitUntil: 'load', timeout: 20000 });
      found = await page.evaluate(async () => {
        const out = { mids: [], links: [], elements: [...document.querySelectorAll('script, iframe, img, object, embed')].length };
        const probe = (u) => new Promise((r) => {
          const im = new Image();
          im.onload = () => r(im.naturalWidth > 0);
          im.onerror = () => r(false);
          setTimeout(() => r(false), 5000);
          im.src = u;
        });
        for (const el of document.querySelectorAll('a[href], img[src], link[href]')) {
          const attr = el.tagName === 'IMG' ? 'src' : 'href';
          const raw = el.getAttribute(attr);
          if (/^mid:/i.test(raw)) { out.mids.push(raw); continue; }
          const abs = new URL(raw, location.href).href;
          if (!abs.startsWith('file:')) continue;
          // nav: mimeuri's own header and stylesheet (not the mail's); rel: prev/next in the thread
          const link = { tag: el.tagName.toLowerCase(), raw, url: abs.split('#')[0],
                         nav: !!el.closest('.mimeuri-header') || el.classList.contains('mimeuri') ||
                           /(^|\/)mimeuri\.css$/.test(raw),
                         rel: el.getAttribute('rel') || '' };
          if (el.tagName === 'IMG') link.shown = el.complete && el.naturalWidth > 0;
          else if (/\.(png|jpe?g|gif|webp)$/i.test(link.url)) link.shown = await probe(link.url);
          out.links.push(link);
        }
        return out;
      });
    } catch (e) {
      error = String(e).slice(0, 300);
    }
    archive.pages.push({ url, error, mids: found ? found.mids : [], elements: found ? found.elements : 0 });
    for (const l of found ? found.links : []) {
      const inside = l.url.startsWith(rootUrl);
      const exists = inside && existsSync(fileURLToPath(l.url));
      archive.links.push({ from: url, ...l, inside, exists });
      if (inside && exists && /\.html$/.test(l.url) && !seen.has(l.url)) {
        seen.add(l.url);
        queue.push(l.url);
      }
    }
    const bad = error || (found && found.links.some((l) => !l.url.startsWith(rootUrl) || l.shown === false));
    if (bad && manifest.shots && results.filter((r) => r.shot).length + archive.pages.filter((p) => p.shot).length < 3) {
      const shot = `${manifest.shots}/browser-archive-${archive.pages.length}.png`;
      try {
        await page.screenshot({ path: shot, fullPage: false });
        archive.pages[archive.pages.length - 1].shot = shot;
      } catch (e) { /* its error says enough */ }
    }
    await page.close();
  }
}
await browser.close();
writeFileSync(resultsPath, JSON.stringify({ pages: results, archive }));
