/**
 * A real nginx (Debian's `nginx` package) in front of omnigate replicas, for tests: its own
 * prefix directory, in the foreground, in its own process group (stopped in teardown). `nginxBin`
 * is the binary (OMNIGATE_NGINX, else nginx on the PATH, or /usr/sbin/nginx); a machine without
 * it skips the tests unless OMNIGATE_REQUIRE_NGINX=1 (set by .ci/run).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../lib/indexer/postgres/embedded.js';
import { spawnGroup, stopGroup, untilListening, type Teardown } from './procs.js';

export const nginxBin = process.env.OMNIGATE_NGINX ?? (existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx');

export function hasNginx(): boolean {
  try {
    execFileSync(nginxBin, ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The nginx configuration of the README's replica deployment (lib/cache/README.md "Replicas"),
 * for these ports: a request that could not be sent to one replica (refused, reset before it was
 * written) goes to the other; one that reached a replica is never sent twice.
 */
export function replicaConfig(listen: number, replicas: number[], prefix: string): string {
  return `
daemon off;
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  upstream omnigate {
${replicas.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join('\n')}
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${listen};
    location / {
      proxy_pass http://omnigate;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout;
      proxy_next_upstream_tries 2;
      proxy_connect_timeout 2s;
      proxy_read_timeout 30s;
    }
  }
}
`;
}

export interface TestNginx {
  url: string;
  /** The master process (its worker is its child). */
  pid: number;
  stop(): Promise<void>;
}

export async function startNginx(t: Teardown, replicas: number[]): Promise<TestNginx> {
  const prefix = await mkdtemp(join(tmpdir(), 'omnigate-nginx-'));
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(join(prefix, d));
  const port = await freePort();
  const conf = join(prefix, 'nginx.conf');
  await writeFile(conf, replicaConfig(port, replicas, prefix));
  const child = spawnGroup(t, nginxBin, ['-p', prefix, '-c', conf], { stdio: 'ignore' });
  t.teardown(() => rm(prefix, { recursive: true, force: true }));
  await untilListening(port, 'nginx');
  if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode})`);
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopGroup(child, 2_000) };
}
