// Runs one bundler on a consumer project, as a child process of the
// ecosystem test so that each tool loads on its own and several run at once:
//   node tool.js vite7|vite8 dev|build <project> [config.json]
//   node tool.js webpack build <project>
// "dev" prints "listening <url>" and serves until killed; "build" writes
// <project>/dist and exits.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [tool, mode, project, configFile] = process.argv.slice(2);
const config = configFile ? JSON.parse(readFileSync(configFile, 'utf8')) : {};

if (tool === 'vite7' || tool === 'vite8') {
  const vite = await import(tool);
  const base = {
    root: project,
    configFile: false,
    logLevel: 'warn',
    clearScreen: false,
    cacheDir: path.join(project, 'node_modules/.vite'),
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null },
    build: { outDir: path.join(project, 'dist'), emptyOutDir: true },
    ...config,
  };
  if (mode === 'dev') {
    const server = await vite.createServer(base);
    await server.listen();
    const { port } = server.httpServer.address();
    console.log(`listening http://127.0.0.1:${port}/`);
  } else {
    await vite.build(base);
  }
} else if (tool === 'webpack') {
  const { default: webpack } = await import('webpack');
  const stats = await new Promise((resolve, reject) =>
    webpack(
      {
        mode: 'production',
        context: project,
        entry: './main.js',
        output: { path: path.join(project, 'dist'), filename: 'main.js' },
        target: 'web',
        ...config,
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    ),
  );
  if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
  console.log(stats.toString({ all: false, assets: true }));
} else {
  throw new Error(`unknown tool ${tool}`);
}
