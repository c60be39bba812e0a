/** Where a scaffold's guesses (`# check:` comments) and report lines go. */
export interface Notes {
  guess: (path: (string | number)[], message: string) => void;
  report: string[];
}
