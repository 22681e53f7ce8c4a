import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/paths.ts', 'src/settings.ts', 'src/clientConfigs.ts', 'src/service.ts', 'src/browser.ts', 'src/serverSentEvents.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  target: 'node20',
  sourcemap: true,
});
