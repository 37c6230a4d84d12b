// The synthetic repository both agent scripts read with their read_file
// tool, and the task and system prompt they give the model.

export const SYSTEM = 'You are a careful coding agent. Read the code with the read_file tool before answering.';
export const description = 'Read a file of the repository and return its content.';
export const parameters = { type: 'object', properties: { path: { type: 'string', description: 'path relative to the repository root' } }, required: ['path'] };

// task is the opening user message of conversation taskID (the stand-in
// tells conversations apart by their TASK-ID).
export function task(taskID) {
  return `TASK-ID: ${taskID}. Read every module under src/ with read_file, one call per module, then summarise what the package does.`;
}

// readFile returns a deterministic module of about 600 tokens.
export function readFile(path) {
  const lines = [`# ${path}`];
  for (let i = 0; i < 40; i++) {
    lines.push(`def step_${i}(value):  # ${path} line ${i}`);
    lines.push(`    return transform(value, ${i}) + offset_${i % 7}`);
  }
  return lines.join('\n');
}
