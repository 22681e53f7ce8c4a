// Reference target: a bare node:http JSON-RPC responder. It parses the body and JSON.stringifies a
// tools/call-shaped result; no gates, no MCP SDK. Prints `READY {"url":...}` on stdout.
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let message;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400);
      res.end();
      return;
    }
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: message.id,
      result: { content: [{ type: 'text', text: String(message.params?.arguments?.text ?? '') }] },
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`READY ${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}/` })}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.stdin.on('end', () => process.exit(0)).resume();
