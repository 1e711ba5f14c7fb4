import { InvalidArgumentError, type Command } from 'commander';

// `memberkit cn approve-node ID DIR`, `memberkit cn nodes DIR` and `memberkit cn token
// --subject S DIR`: the administrator's commands of a Coordinating Node folder. Each action
// imports @memberkit/cn when it runs (a fast --help).

/** The `cn` command registered by commands/cn.ts (created here when absent). */
function cnCommand(program: Command): Command {
  return program.commands.find((c) => c.name() === 'cn') ?? program.command('cn').description('a DataONE Coordinating Node: create, serve and administer one');
}

export function registerCnAdminCommands(program: Command): void {
  const cn = cnCommand(program);

  cn.command('approve-node')
    .description('approve a registered node: listNodes shows it from now on (a running CN too)')
    .argument('<id>', 'the node identifier, e.g. urn:node:MYREPO')
    .argument('[dir]', 'CN folder', '.')
    .option('-c, --config <file>', 'configuration file (default: <dir>/memberkit.config.json)')
    .action(async (id: string, dir: string, opts: { config?: string }) => {
      const { approveNodeInFolder } = await import('@memberkit/cn');
      const outcome = await approveNodeInFolder(dir, id, opts.config ? { configFile: opts.config } : {});
      console.log(outcome === 'approved' ? `approved ${id}` : `${id} was already approved`);
    });

  cn.command('nodes')
    .description('list the registered nodes, approved or waiting for approval')
    .argument('[dir]', 'CN folder', '.')
    .option('-c, --config <file>', 'configuration file (default: <dir>/memberkit.config.json)')
    .action(async (dir: string, opts: { config?: string }) => {
      const { listNodesInFolder } = await import('@memberkit/cn');
      const nodes = await listNodesInFolder(dir, opts.config ? { configFile: opts.config } : {});
      if (nodes.length === 0) console.log('no node is registered');
      for (const n of nodes) console.log(`${n.identifier}\t${n.approved ? 'approved' : 'waiting'}\t${n.baseURL}\tregistered ${n.registered.toISOString()} by ${n.registeredBy}`);
    });

  cn.command('token')
    .description("print a bearer JWT for a subject, signed with the CN's token key (the CN and the Member Nodes trusting its key set accept it)")
    .argument('[dir]', 'CN folder', '.')
    .requiredOption('-s, --subject <subject>', 'the subject the token names')
    .option('--ttl <duration>', 'lifetime: seconds, or 30m, 12h, 7d (default: cn.tokens.ttlSeconds)')
    .option('-c, --config <file>', 'configuration file (default: <dir>/memberkit.config.json)')
    .action(async (dir: string, opts: { subject: string; ttl?: string; config?: string }) => {
      const { parseDuration } = await import('@memberkit/core');
      let ttlSeconds: number | undefined;
      if (opts.ttl !== undefined) {
        try {
          ttlSeconds = parseDuration(opts.ttl);
        } catch (err) {
          throw new InvalidArgumentError(`--ttl: ${(err as Error).message}`);
        }
      }
      const { tokenFromFolder } = await import('@memberkit/cn');
      const token = await tokenFromFolder(dir, { subject: opts.subject, ...(ttlSeconds !== undefined ? { ttlSeconds } : {}), ...(opts.config ? { configFile: opts.config } : {}) });
      process.stdout.write(token + '\n');
    });
}
