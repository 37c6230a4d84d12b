// Loaded before an agent script (node --import ./guard.mjs): every TCP
// connection to anything but the loopback interface is refused and
// reported on stderr, so that no SDK or framework (telemetry, tracing
// export, a default base URL) reaches the network during a test.
import net from 'node:net';

const loopback = new Set(['127.0.0.1', '::1', 'localhost']);
const connect = net.Socket.prototype.connect;

net.Socket.prototype.connect = function guardedConnect(...args) {
  const first = args[0];
  let host = 'localhost';
  if (Array.isArray(first)) {
    host = first[0]?.host ?? 'localhost';
  } else if (first && typeof first === 'object') {
    host = first.path ? 'localhost' : (first.host ?? 'localhost');
  } else if (typeof first !== 'string') { // (port, host) rather than a socket path
    host = typeof args[1] === 'string' ? args[1] : 'localhost';
  }
  if (!loopback.has(host)) {
    const err = new Error(`network guard: connection to ${host} refused (tests stay on the loopback interface)`);
    process.stderr.write(err.message + '\n');
    process.exitCode = 3;
    throw err;
  }
  return connect.apply(this, args);
};
