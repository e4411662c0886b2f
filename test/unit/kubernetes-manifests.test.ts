import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { configKeys } from '../helpers/config-keys.ts';

// deploy/kubernetes/ (docs/DEPLOY.md, "Kubernetes"): no cluster and no schema download here, so
// each manifest is parsed and held to what the guide promises — probes, commands, images,
// secrets from a Secret, the metrics port kept off the Service.

const DIR = 'deploy/kubernetes';

interface Container {
  image: string;
  args: string[];
  ports?: { name: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  livenessProbe?: { httpGet?: { path: string; port: string } };
  readinessProbe?: { httpGet?: { path: string; port: string } };
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  resources?: string[];
  images?: { name: string; newName: string; newTag: string }[];
}

const manifests = new Map<string, Manifest>();
for (const file of fs.readdirSync(DIR).filter((f) => f.endsWith('.yaml'))) {
  const docs = parseAllDocuments(fs.readFileSync(path.join(DIR, file), 'utf8'));
  assert.ok(Array.isArray(docs), file);
  for (const doc of docs) assert.deepEqual(doc.errors, [], file);
  assert.equal(docs.length, 1, `${file}: one manifest a file`);
  manifests.set(file, docs[0]!.toJS() as Manifest);
}
const get = (file: string) => manifests.get(file) ?? assert.fail(`${file} missing`);
const podSpec = (file: string) => get(file).spec.template.spec;
const container = (file: string): Container => podSpec(file).containers[0];

const kustomization = get('kustomization.yaml');
const secretKeys = Object.keys(get('secret.example.yaml').stringData ?? {});
const configMap = get('configmap.yaml');

describe('deploy/kubernetes', () => {
  it('kustomization lists the manifests that exist, never the example secret', () => {
    for (const r of kustomization.resources ?? []) assert.ok(manifests.has(r), r);
    assert.ok(!kustomization.resources?.includes('secret.example.yaml'));
    assert.ok(!kustomization.resources?.includes('migrate-job.yaml'), 'the Job runs apart, before a rollout');
  });

  it(
    'the serve Deployment runs serve --no-worker with liveness /healthz, ' + 'readiness /readyz and the metrics port',
    () => {
      const c = container('serve-deployment.yaml');
      assert.deepEqual(c.args, ['serve', '--no-worker']);
      assert.deepEqual(c.livenessProbe?.httpGet, { path: '/healthz', port: 'http' });
      assert.deepEqual(c.readinessProbe?.httpGet, { path: '/readyz', port: 'http' });
      const ports = Object.fromEntries((c.ports ?? []).map((p) => [p.name, p.containerPort]));
      assert.equal(ports.http, Number(configMap.data?.PORT));
      assert.equal(ports.metrics, Number(configMap.data?.METRICS_PORT));
    },
  );

  it('the worker Deployment runs worker, and the Job runs migrate', () => {
    assert.deepEqual(container('worker-deployment.yaml').args, ['worker']);
    assert.equal(container('worker-deployment.yaml').readinessProbe, undefined, 'a worker answers no /readyz');
    assert.equal(get('migrate-job.yaml').kind, 'Job');
    assert.deepEqual(container('migrate-job.yaml').args, ['migrate']);
    assert.notEqual(podSpec('migrate-job.yaml').restartPolicy, 'Always');
  });

  it('every container runs the one pinned image, as a non-root user', () => {
    const [image] = kustomization.images ?? [];
    assert.ok(image && /^\d+\.\d+\.\d+$/.test(image.newTag), 'a version tag');
    for (const file of ['serve-deployment.yaml', 'worker-deployment.yaml']) {
      assert.equal(container(file).image, image.name, `${file}: rewritten by kustomize`);
    }
    assert.equal(container('migrate-job.yaml').image, `${image.newName}:${image.newTag}`);
    for (const file of ['serve-deployment.yaml', 'worker-deployment.yaml', 'migrate-job.yaml']) {
      const sc = podSpec(file).securityContext;
      assert.equal(sc?.runAsNonRoot, true, file);
      assert.ok(Number.isInteger(sc?.runAsUser) && sc.runAsUser > 0, `${file}: numeric uid`);
    }
  });

  it('secrets come from the Secret, settings from the ConfigMap; no secret is written in a manifest', () => {
    for (const file of ['serve-deployment.yaml', 'worker-deployment.yaml', 'migrate-job.yaml']) {
      const c = container(file);
      assert.equal(c.envFrom?.[0]?.configMapRef?.name, configMap.metadata.name, file);
      for (const name of ['DATABASE_URL', 'LEADINTAKE_ENCRYPTION_KEY']) {
        const ref = c.env?.find((e) => e.name === name)?.valueFrom?.secretKeyRef;
        assert.ok(ref, `${file}: ${name} from a Secret`);
        assert.equal(ref.name, get('secret.example.yaml').metadata.name);
        assert.ok(secretKeys.includes(ref.key), `${file}: ${ref.key} in secret.example.yaml`);
      }
      assert.deepEqual(
        (c.env ?? []).filter((e) => e.value !== undefined).map((e) => e.name),
        [],
        `${file}: literal values belong in the ConfigMap`,
      );
    }
    for (const value of Object.values(get('secret.example.yaml').stringData ?? {})) {
      assert.ok(value === '' || value.includes('CHANGE-ME'), `placeholder: ${value}`);
    }
  });

  it('the ConfigMap sets only config variables; migrations run in the Job, not at start', () => {
    const keys = new Set([...configKeys(), 'MIGRATE_ON_START']);
    for (const k of Object.keys(configMap.data ?? {})) assert.ok(keys.has(k), k);
    assert.equal(configMap.data?.MIGRATE_ON_START, 'false');
    assert.equal(configMap.data?.HOST, '0.0.0.0');
  });

  it("the guide applies what the migrate Job reads before the Job: the first install's ConfigMap too", () => {
    const guide = fs.readFileSync('docs/DEPLOY.md', 'utf8');
    const applied = [...guide.matchAll(/kubectl apply((?: -f [\w.-]+)+)/g)].flatMap((m) =>
      [...m[1]!.matchAll(/-f ([\w.-]+)/g)].map((f) => f[1]!),
    );
    const job = applied.indexOf('migrate-job.yaml');
    assert.ok(job >= 0, 'the guide applies the migrate Job');
    const refs = (container('migrate-job.yaml').envFrom ?? []).map((e) => e.configMapRef?.name).filter(Boolean);
    for (const name of refs) {
      const file = [...manifests].find(([, m]) => m.kind === 'ConfigMap' && m.metadata.name === name)?.[0];
      assert.ok(file && applied.indexOf(file) >= 0 && applied.indexOf(file) <= job, `${name} applied before the Job`);
    }
  });

  it('the Service selects the serve pods and exposes their HTTP port, not metrics', () => {
    const service = get('service.yaml');
    const labels = get('serve-deployment.yaml').spec.template.metadata.labels;
    for (const [k, v] of Object.entries(service.spec.selector)) assert.equal(labels[k], v, k);
    const targets = service.spec.ports.map((p: { targetPort: string | number }) => p.targetPort);
    assert.deepEqual(targets, ['http']);
  });
});
