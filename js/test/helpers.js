// Shared by the Node tests.

// crawlerURLs returns n distinct URL-like keys, the same on every call.
export function crawlerURLs(n, prefix = 'https://www.example') {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = `${prefix}${i % 97}.com/path/${i}/page-${(i * 2654435761) >>> 0}.html`;
  return out;
}
