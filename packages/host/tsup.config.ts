import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    paths: 'src/config/paths.ts',
    settings: 'src/config/settings.ts',
    clientConfigs: 'src/setup/clientConfigs.ts',
    service: 'src/setup/service.ts',
    browser: 'src/setup/browser.ts',
    serverSentEvents: 'src/setup/serverSentEvents.ts',
  },
  format: ['esm'],
  dts: true,
  clean: true,
  target: 'node20',
  sourcemap: true,
});
