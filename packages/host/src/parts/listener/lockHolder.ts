import type { HostContext, HostPart } from '../../context/hostContext.js';
import { acquireHostLock, type HostLock, type HostLockState } from '../../locks/hostLock.js';

/** The config directory's lock (`run/host.lock`): taken when the host starts listening, released last when it closes. */
export interface LockHolder extends HostPart {
  /** Takes the lock unless held. @throws HostError `locked` (another host holds the directory). */
  acquire(address: string): void;
  /** Records where the host listens (for the message a second host prints). */
  update(change: Pick<HostLockState, 'url' | 'adminUrl'>): Promise<void>;
}

export function createLockHolder(context: HostContext): LockHolder {
  const { paths } = context;
  let lock: HostLock | undefined;
  return {
    acquire(address) {
      lock ??= acquireHostLock({ runDir: paths.runDir, home: paths.home, instance: context.instance, address, onWarning: (message) => context.logging.log('warning', message) });
    },
    async update(change) {
      await lock?.update(change);
    },
    async close() {
      lock?.release();
    },
  };
}
