'use strict';
// A throwaway self-signed certificate for 127.0.0.1, made with openssl as a PEM pair (the form the
// README gives Kestrel), and the SPKI hash Chromium is told to trust it by. A test that needs it fails
// with this message when openssl is missing; it never skips.
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function createSelfSignedCertificate() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'laharsub-tls-'));
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  try {
    // P-256 rather than RSA: generated at once, and Kestrel and Chromium take either.
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyPath, '-out', certPath, '-days', '2', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 15000 });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`openssl could not make a test certificate (${error.message}): apt-get install openssl.`);
  }
  const publicKey = new crypto.X509Certificate(fs.readFileSync(certPath)).publicKey.export({ type: 'spki', format: 'der' });
  return {
    certPath,
    keyPath,
    /** For Chromium's --ignore-certificate-errors-spki-list: trusts this certificate and no other. */
    spkiHash: crypto.createHash('sha256').update(publicKey).digest('base64'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

module.exports = { createSelfSignedCertificate };
