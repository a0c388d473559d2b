// A Piscina task that answers with what it was given (tests of how Piscina is driven).
export default function echo(task) {
  return task;
}
