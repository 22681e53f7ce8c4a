// Load generator, run with child_process.fork so it never shares an event loop with a server.
// Receives { id, url, headers, body, idReplacement, connections, durationSec, overallRate?, discard } over IPC, drives the
// target with autocannon (keep-alive, no pipelining), and answers with throughput and latency.
// Latencies come from autocannon's per-response event in float milliseconds: its own histogram has
// 1 ms resolution, too coarse for sub-millisecond responses.
import autocannon from 'autocannon';

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

function drive({ url, headers, body, idReplacement, connections, durationSec, overallRate }, record) {
  return new Promise((resolve, reject) => {
    let latencies = record ? new Float64Array(1 << 20) : undefined;
    let count = 0;
    let ok = 0;
    const statusCodes = {};
    const instance = autocannon(
      { url, method: 'POST', headers, body, idReplacement, connections, pipelining: 1, duration: durationSec, timeout: 10, ...(overallRate ? { overallRate } : {}) },
      (error, result) => (error ? reject(error) : resolve({ result, latencies: latencies?.subarray(0, count), ok, statusCodes })),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
      if (statusCode < 200 || statusCode >= 300) return;
      ok++;
      if (!latencies) return;
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = responseTime;
    });
  });
}

process.on('message', async (job) => {
  try {
    if (job.discard) {
      await drive(job, false);
      process.send({ id: job.id, ok: true, stats: {} });
      return;
    }
    const cpuStart = process.cpuUsage();
    const { result, latencies, ok, statusCodes } = await drive(job, true);
    const cpu = process.cpuUsage(cpuStart);
    const sorted = Float64Array.from(latencies).sort();
    process.send({
      id: job.id,
      ok: true,
      stats: {
        requestsPerSec: ok / result.duration,
        completed: ok,
        durationSec: result.duration,
        p50Ms: percentile(sorted, 50),
        p90Ms: percentile(sorted, 90),
        p99Ms: percentile(sorted, 99),
        maxMs: sorted.length ? sorted[sorted.length - 1] : NaN,
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        statusCodes,
        loadgenCpu: (cpu.user + cpu.system) / 1e6 / result.duration,
      },
    });
  } catch (error) {
    process.send({ id: job.id, ok: false, error: String(error?.stack ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));
