// The jQuery plugin's committed bundle (src/Clients/JQuery/jquery.laharsub.js) is what its build makes
// from the sources (the plugin's src/ and the laharsub module), so that the served demo, the browser tests
// and a page that copies the file run the code in the repository. To make it again:
//   cd src/Clients/JQuery && npm install && npm run build
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import * as esbuild from 'esbuild';
import { bundle, outputFile } from '../../../src/Clients/JQuery/build.mjs';

test('the committed jquery.laharsub.js is the bundle of the plugin and the module as they are', async () => {
  const built = await bundle(esbuild);
  const committed = await readFile(outputFile, 'utf8');
  assert.ok(built === committed, 'src/Clients/JQuery/jquery.laharsub.js is out of date: run `npm run build` in src/Clients/JQuery and commit it');
  assert.match(committed, /\$\.laharsub = function/, 'the bundle holds the plugin');
  assert.match(committed, /var LaharsubClient = class/, 'the bundle holds the module');
});
