'use strict';
// Where the code under test lives, relative to this test package.
const path = require('node:path');

const repo = path.resolve(__dirname, '..', '..', '..');
const clientDir = path.join(repo, 'src', 'Clients', 'JQuery');

module.exports = {
  repo,
  clientDir,
  clientScript: path.join(clientDir, 'jquery.laharsub.js'),
  serverDll: path.join(repo, 'src', 'Server', 'Host', 'bin', 'Release', 'net10.0', 'Laharsub.Server.Host.dll'),
  // The jQuery builds the demo vendors; every test runs against each.
  jqueryVersions: {
    '3.7.1': path.join(clientDir, 'demo', 'vendor', 'jquery-3.7.1.min.js'),
    '4.0.0': path.join(clientDir, 'demo', 'vendor', 'jquery-4.0.0.min.js'),
  },
};
