import { SwitchboardError } from '../errors/index.ts';
import type { Scaffold } from './scaffold.ts';
export async function scaffoldFromGraphql(_file: string, _o: { type: string; entities?: string[] | undefined; descriptionPath: string; source: string; endpoint: string }): Promise<Scaffold> {
  throw new SwitchboardError('invalid_params', 'not yet');
}
