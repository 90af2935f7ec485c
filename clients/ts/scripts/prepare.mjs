// Builds dist/ whenever npm prepares this package: `npm install` in this folder, `npm pack` (so the
// tarball ships built and installs with no script of ours), and `npm install <path>/clients/ts` from
// another project. npm links that folder instead of copying it and runs prepare here, and node resolves
// the linked package's imports from this folder: so on a fresh clone the dependencies are installed
// here first, devDependencies included (tsc), whatever --omit=dev or NODE_ENV=production the outer
// install runs with — they would otherwise reach the inner npm through the environment.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const OUTER_INSTALL_SETTINGS =
  /^npm_config_(local_prefix|prefix|global|omit|include|production|only|dev|install_links|ignore_scripts|workspaces?|save.*|package_lock_only|dry_run)$/i;

function innerInstallEnvironment() {
  const environment = { ...process.env };
  for (const name of Object.keys(environment)) {
    if (OUTER_INSTALL_SETTINGS.test(name) || name === "NODE_ENV") delete environment[name];
  }
  return environment;
}

// Every dependency present (a checkout updated since its last install may lack a new one), else a clean install.
const manifest = JSON.parse(readFileSync(`${packageDir}/package.json`, "utf8"));
const wanted = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
if (wanted.some((name) => !existsSync(`${packageDir}/node_modules/${name}/package.json`))) {
  const npmCli = process.env.npm_execpath;
  const [command, args] = npmCli ? [process.execPath, [npmCli]] : ["npm", []];
  execFileSync(command, [...args, "ci", "--include=dev", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: packageDir, env: innerInstallEnvironment(), stdio: ["ignore", "inherit", "inherit"],
  });
}
execFileSync(process.execPath, [`${packageDir}/node_modules/typescript/bin/tsc`, "-p", "tsconfig.json"], {
  cwd: packageDir, stdio: ["ignore", "inherit", "inherit"],
});
