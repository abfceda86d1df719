'use strict';
// HS256 tokens for a server in Jwt mode, written by hand so that the tests do not share code with the server.
const crypto = require('node:crypto');

/**
 * A token signing function for one key, issuer and audience: `token(claim, { subject, expiresIn })` is
 * a JWT whose laharsub claim is `claim`, valid from two hours ago until `expiresIn` seconds from now.
 */
function tokenIssuer({ key, issuer, audience }) {
  return function token(claim, { subject = 'page', expiresIn = 3600 } = {}) {
    const now = Math.floor(Date.now() / 1000);
    const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const input = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({
      iss: issuer, aud: audience, sub: subject, iat: now - 7200, nbf: now - 7200, exp: now + expiresIn, laharsub: claim,
    })}`;
    return `${input}.${crypto.createHmac('sha256', key).update(input).digest('base64url')}`;
  };
}

module.exports = { tokenIssuer };
