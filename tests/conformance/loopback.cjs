// Preloaded into the bridge (node --require) so that it listens on
// 127.0.0.1 only. supergateway 4.0.0 calls listen(port, callback) with no
// host, and Node then binds every interface; the conformance stage must
// never open a port anything but this machine can reach. Every listen that
// names a port but no host gets 127.0.0.1; one that names a host keeps it.
// run.sh checks the bound address afterwards, so a bridge that stops going
// through this path fails the stage instead of listening wider.
'use strict';

const net = require('node:net');

const LOOPBACK = '127.0.0.1';
const listen = net.Server.prototype.listen;

function isPort(value) {
  return typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value));
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const [first] = args;
  if (isPort(first) && typeof args[1] !== 'string') {
    // listen(port[, backlog][, callback]) becomes listen(port, host[, backlog][, callback]).
    args.splice(1, 0, LOOPBACK);
  } else if (first !== null && typeof first === 'object' && isPort(first.port) && first.host === undefined) {
    // listen({port, ...}), the options form; handles and paths are left alone.
    args[0] = { ...first, host: LOOPBACK };
  }
  return listen.apply(this, args);
};
