// The key a URL is listed and looked up under: its canonical form
// (canonicalURL: case, default port, fragment, query order, tracking
// parameters), for absolute http and https URLs only. A blocklist of web
// pages holds nothing else, so any other URL is refused, by the build as by
// the Worker, with a TypeError that says why.
import { canonicalURL } from 'edgebloom';

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const WANT = 'pass an absolute http or https URL, such as https://example.com/page';

export function blocklistKey(url) {
  const scheme = SCHEME.exec(url)?.[1].toLowerCase();
  if (scheme === undefined) throw new TypeError(`no scheme: ${WANT}`);
  if (scheme !== 'http' && scheme !== 'https') throw new TypeError(`scheme "${scheme}" is not http or https: ${WANT}`);
  try {
    return canonicalURL(url);
  } catch (err) {
    // A missing host, a bad host or escape, a control character.
    throw new TypeError(`${err.message}: ${WANT}`, { cause: err });
  }
}
