// A deterministic training pass of ~10 MB encoded (three snapshot chunks), told apart by its
// position: for the training-snapshot tests and the child process that writes it.
import { emptyPass, type TrainingPass } from '../../src/training/training-snapshot.ts';

export function snapshotPass(position: number): TrainingPass {
  const pass = emptyPass();
  pass.position = position;
  pass.newestSec = 1_700_000_000 + position;
  for (let u = 0; u < 20_000; u++) {
    pass.consumers.set(`u\u0000user-${u}-é`, u);
    for (let k = 0; k < 30; k++) pass.consumed.note(u, (u * 7 + k * 13 + position) % 100_000, 1 + ((u + k) % 5), 1_700_000_000 + k);
  }
  for (let d = 0; d < 1000; d++) pass.deviceUser.set(`device-${d}`, `user-${d * 3}`);
  return pass;
}
