import { readdir, readFile, statfs } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { json } from '../content.js';
import { defineCapability, defineCommand, type Capability } from '../contract.js';

const POWER_SUPPLY_DIR = '/sys/class/power_supply';

function userName(): string | undefined {
  try {
    return os.userInfo().username;
  } catch {
    return process.env.USER ?? process.env.USERNAME;
  }
}

async function readTrimmed(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** The first battery in /sys/class/power_supply (Linux); `undefined` elsewhere or without one. */
async function linuxBattery(): Promise<Record<string, unknown> | undefined> {
  if (process.platform !== 'linux') return undefined;
  let entries: string[];
  try {
    entries = await readdir(POWER_SUPPLY_DIR);
  } catch {
    return undefined;
  }
  for (const entry of entries.sort()) {
    const dir = path.join(POWER_SUPPLY_DIR, entry);
    if ((await readTrimmed(path.join(dir, 'type'))) !== 'Battery') continue;
    const capacity = Number(await readTrimmed(path.join(dir, 'capacity')));
    const status = await readTrimmed(path.join(dir, 'status'));
    return {
      name: entry,
      ...(Number.isFinite(capacity) ? { percent: capacity } : {}),
      ...(status ? { status: status.toLowerCase() } : {}),
    };
  }
  return undefined;
}

async function homeDisk(): Promise<Record<string, unknown> | undefined> {
  const home = os.homedir();
  try {
    const info = await statfs(home);
    return { path: home, totalBytes: info.blocks * info.bsize, freeBytes: info.bfree * info.bsize, availableBytes: info.bavail * info.bsize };
  } catch {
    return undefined;
  }
}

/**
 * `device.info` (static facts: OS, architecture, host name, CPUs, memory, Node version, user) and
 * `device.status` (load, free memory, uptime, battery on Linux, free disk space of the home directory).
 */
export function createDeviceCapability(): Capability {
  return defineCapability({
    category: 'device',
    commands: [
      defineCommand({
        name: 'device.info',
        description: 'Describes this machine: OS, platform, architecture, release, host name, CPU model and count, total memory, Node.js version, user name, uptime.',
        annotations: { title: 'Device info', readOnly: true, idempotent: true },
        input: z.object({}),
        execute() {
          const cpus = os.cpus();
          const user = userName();
          return json({
            os: os.type(),
            platform: process.platform,
            arch: os.arch(),
            release: os.release(),
            version: os.version(),
            hostname: os.hostname(),
            cpus: { model: cpus[0]?.model.trim() ?? 'unknown', count: cpus.length },
            memory: { totalBytes: os.totalmem() },
            node: process.version,
            ...(user === undefined ? {} : { user }),
            uptimeSeconds: Math.round(os.uptime()),
          });
        },
      }),
      defineCommand({
        name: 'device.status',
        description: 'Current state of this machine: load average (not on Windows), free and total memory, uptime, battery (Linux, when present), free disk space of the home directory.',
        annotations: { title: 'Device status', readOnly: true },
        input: z.object({}),
        async execute() {
          const [battery, disk] = await Promise.all([linuxBattery(), homeDisk()]);
          return json({
            ...(process.platform === 'win32' ? {} : { loadAverage: os.loadavg() }),
            memory: { freeBytes: os.freemem(), totalBytes: os.totalmem() },
            uptimeSeconds: Math.round(os.uptime()),
            ...(battery === undefined ? {} : { battery }),
            ...(disk === undefined ? {} : { disk }),
          });
        },
      }),
    ],
  });
}
