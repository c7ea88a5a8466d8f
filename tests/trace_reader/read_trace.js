// Opens a Chrome Trace Event JSON file with an independent reader (@tracerbench/trace-model) and checks
// what the model built from it: one process, named threads, and complete events that never overlap on
// one thread. Prints a JSON summary; exits 1 with a message on any problem.
'use strict';
const fs = require('fs');
const { buildModel } = require('@tracerbench/trace-model');

function fail(message) {
  console.error(`read_trace: ${message}`);
  process.exit(1);
}

const file = process.argv[2];
if (!file) fail('usage: node read_trace.js trace.json');
const trace = JSON.parse(fs.readFileSync(file, 'utf8'));
if (!Array.isArray(trace.traceEvents)) fail('no traceEvents array');
const model = buildModel(trace.traceEvents);
let threads = 0;
let complete = 0;
let counters = 0;
for (const p of model.processes) {
  for (const e of p.events) if (e.ph === 'C') counters++;
  for (const t of p.threads) {
    threads++;
    const slices = t.events.filter((e) => e.ph === 'X').sort((a, b) => a.start - b.start);
    complete += slices.length;
    for (let i = 1; i < slices.length; i++) {
      const previous = slices[i - 1];
      if (slices[i].start < previous.end - 1e-9 && slices[i].end > previous.end + 1e-9)
        fail(`thread ${t.name || t.id}: slices "${previous.name}" and "${slices[i].name}" overlap without nesting`);
    }
  }
}
console.log(JSON.stringify({ processes: model.processes.length, threads, complete, counters }));
