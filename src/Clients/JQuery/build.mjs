// Builds jquery.laharsub.js, the one script a page loads after jQuery: the plugin (src/) and the laharsub
// module it runs on (../JavaScript), bundled by esbuild into a UMD wrapper. The bundle is committed, so
// that the server's demo and a page that copies the file need no build; tests/Browser/js/jquery-build.test.mjs
// checks that it is what this script makes from the sources.
//   cd src/Clients/JQuery && npm install && npm run build
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const here = (name) => fileURLToPath(new URL(name, import.meta.url));
export const outputFile = here('./jquery.laharsub.js');

const banner = `/*!
 * jquery.laharsub.js: the jQuery client for Laharsub, HTTP pub/sub. All of a page's subscriptions share
 * one connection, a WebSocket, a Server-Sent Events stream or a long poll (tried in that order).
 * $.laharsub over the laharsub module, bundled: jQuery 3.7 or 4 and nothing else. Wire protocol: docs/protocol.md.
 * Built by src/Clients/JQuery/build.mjs from src/Clients/JQuery/src and src/Clients/JavaScript: edit those.
 * Copyright (c) 2026 the Laharsub contributors. MIT licence: see LICENSE at the repository root.
 */
(function (factory) {
  'use strict';
  if (typeof define === 'function' && define.amd) {
    define(['jquery'], factory);
  } else if (typeof module === 'object' && module.exports) {
    // CommonJS gets the factory: jQuery needs a window, which only the caller has.
    module.exports = factory;
  } else {
    factory(window.jQuery);
  }
}(function ($) {`;

const footer = `  return laharsubPlugin.install($);
}));`;

/** The bundle's text, made with the given esbuild module. */
export async function bundle(esbuild) {
  const result = await esbuild.build({
    entryPoints: [here('./src/jquery.laharsub.mjs')],
    bundle: true,
    write: false,
    format: 'iife',
    globalName: 'laharsubPlugin',
    target: 'es2020',
    legalComments: 'none',
    charset: 'utf8',
    banner: { js: banner },
    footer: { js: footer }
  });
  return result.outputFiles[0].text;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await bundle(await import('esbuild'));
  const before = await readFile(outputFile, 'utf8').catch(() => '');
  await writeFile(outputFile, text);
  console.log(`${outputFile}: ${text.length} characters${before === text ? ' (unchanged)' : ''}`);
}
