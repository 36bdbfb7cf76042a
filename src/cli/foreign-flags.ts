import type { Command } from 'commander';

/** A command's name as typed: `plan`, `ctl status`; `` for amsync itself. */
function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

function everyCommand(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(everyCommand)];
}

/** Subcommands of one command named once: `ctl status|sync` rather than each in full. */
function grouped(paths: readonly string[]): string[] {
  const groups = new Map<string, string[]>();
  for (const path of paths) {
    const [parent, ...rest] = path.split(' ');
    const key = rest.length === 0 ? path : parent!;
    groups.set(key, [...(groups.get(key) ?? []), rest.join(' ')]);
  }
  return [...groups].map(([key, subs]) => (subs.length === 1 && subs[0] === '' ? key : `${key} ${subs.join('|')}`));
}

/** The command `args` (process.argv after the script) names: the deepest subcommand its leading words reach. */
export function commandNamed(program: Command, args: readonly string[]): Command {
  let cmd = program;
  for (const word of args) {
    const next = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (next === undefined) break;
    cmd = next;
  }
  return cmd;
}

/**
 * The explanation of a flag `cmd` lacks and other commands have: which commands take it and
 * what it does there, from the command tree (every visible option of every other command), so
 * a new flag is explained without a list to keep. Undefined when no command has it (a typo:
 * commander's suggestion stands).
 */
export function foreignFlagMessage(program: Command, self: Command, typed: string): string | undefined {
  const commandPath = pathOf(self);
  const flag = typed.replace(/=.*$/s, '');
  const owners = everyCommand(program).flatMap((cmd) => {
    const path = pathOf(cmd);
    // `rotate` takes the flags of `sync` (it is `sync --only ADDR --replace ADDR`): naming sync is enough.
    if (cmd === self || path === '' || cmd.name() === 'help' || cmd.name() === 'rotate') return [];
    const option = cmd.options.find((o) => !o.hidden && (o.long === flag || o.short === flag));
    return option === undefined ? [] : [{ path, description: option.description }];
  });
  if (owners.length === 0) return undefined;
  const names = grouped(owners.map(({ path }) => path)).map((path) => `\`amsync ${path}\``);
  const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
  // The first clause of what it does: the rest (environment variables, defaults) is in that command's help.
  const what = owners[0]!.description.split('; ')[0]!;
  const refuser = commandPath === '' ? '`amsync` itself' : `\`amsync ${commandPath}\``;
  const help = commandPath === '' ? 'give the command first: amsync COMMAND --help lists its flags' : `\`amsync ${commandPath} --help\` lists the flags it takes`;
  return `\`${flag}\` is a flag of ${list}: ${what}. ${refuser} does not take it: ${help}`;
}
