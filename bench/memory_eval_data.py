"""Writes the memory-search evaluation sets: long two-person conversations, one memory entry per turn,
and natural questions whose evidence turns are labelled.

Each conversation is ~400 turns over ~20 sessions: small talk, distractor turns that mention the same
things without being the answer (the other person's wishes, plans, other facts of the same kind), and
about 35 personal facts, each stated once by one speaker in one turn (some followed by a second turn
that also answers the question). A question asks about one fact in plain words ("What kind of dog did
Maria get?"), often in other words than the turn used ("We finally adopted a beagle puppy").

Two sets that share nothing a search could be tuned on: the dev set (`dev`, for choosing fusion
weights, candidate depths and priors) and the test set (`test`, scored once at the end). Every fact
kind has four ways to state it and four ways to ask about it; dev uses two of each, test the other two.
Speaker names and slot values (breeds, cities, books, …) are split in halves the same way, and the
random seeds differ.

    .venv/bin/python bench/memory_eval_data.py   # rewrites bench/data/memory_eval_{dev,test}.json
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


@dataclasses.dataclass(frozen=True)
class FactKind:
    """A kind of personal fact: slot values, four statements, four questions, and what a second evidence
    turn may add. {s} is the speaker's name in questions; {v} the slot value."""

    name: str
    values: tuple[str, ...]
    statements: tuple[str, str, str, str]
    questions: tuple[str, str, str, str]
    follow_ups: tuple[str, ...] = ()
    distractors: tuple[str, ...] = ()  # said by the other speaker: same topic, not the answer


KINDS = [
    FactKind("pet", ("beagle", "golden retriever", "border collie", "dachshund", "corgi", "labrador",
                     "greyhound", "poodle"),
             ("We finally adopted a {v} puppy last weekend!", "Guess what, there's a new member of the family: a little {v}.",
              "I brought home a {v} from the shelter, he's already chewing my shoes.",
              "My partner and I got a dog, a {v}, and the apartment is chaos now."),
             ("What kind of dog did {s} get?", "Which breed is {s}'s new puppy?",
              "What pet did {s} adopt recently?", "What type of dog does {s} have now?"),
             ("He sleeps on my feet every night, best decision ever.",),
             ("I've always wanted a {v}, but my landlord says no pets.",)),
    FactKind("class", ("pottery", "salsa dancing", "woodworking", "photography", "improv comedy", "sushi making",
                       "watercolor painting", "glassblowing"),
             ("I signed up for a {v} class at the community center.", "Started taking {v} lessons on Thursday evenings.",
              "I enrolled in a beginner {v} course, first session was so fun.",
              "Every Monday I now go to a {v} workshop downtown."),
             ("What class did {s} sign up for?", "Which course is {s} taking these days?",
              "What new skill has {s} been learning in the evenings?", "What lessons did {s} enroll in?"),
             (),
             ("A friend keeps telling me to try {v}, maybe someday.",)),
    FactKind("trip", ("Lisbon", "Kyoto", "Reykjavik", "Marrakesh", "Vancouver", "Buenos Aires", "Prague", "Hanoi"),
             ("Just got back from {v}, the food was unbelievable.", "We spent ten days in {v} and I didn't want to leave.",
              "My vacation in {v} was the best trip I've ever taken.", "Landed last night after a week exploring {v}."),
             ("Where did {s} travel recently?", "Which city did {s} visit on vacation?",
              "Where did {s} go on their last holiday?", "What place did {s} just come back from?"),
             ("I took like a thousand photos of the old town.",),
             ("I'd love to visit {v} one day, it looks gorgeous.",)),
    FactKind("job", ("nurse", "data analyst", "high school teacher", "architect", "paramedic", "sous chef",
                     "software engineer", "librarian"),
             ("I started a new job as a {v} on Monday!", "I accepted the offer, I'm officially a {v} now.",
              "After months of interviews I got hired as a {v}.", "First week working as a {v} and I'm exhausted but happy."),
             ("What is {s}'s new job?", "What position was {s} hired for?", "What does {s} do for work now?",
              "What career did {s} start recently?"),
             ("The people on my new team are really kind.",),
             ("My cousin works as a {v} and says it's stressful.",)),
    FactKind("race", ("half marathon", "10K fun run", "triathlon", "marathon", "trail ultramarathon",
                      "charity 5K", "obstacle course race", "cycling century"),
             ("I finished my first {v} on Sunday, my legs are dead.", "Crossed the finish line of a {v} this weekend!",
              "I completed the {v} in under my goal time.", "Did a {v} yesterday, still can't believe I made it."),
             ("What race did {s} complete?", "Which event did {s} finish last weekend?",
              "What athletic challenge did {s} take on?", "What did {s} run in recently?"),
             ("Training for it took four months of early mornings.",),
             ("I'm thinking about signing up for a {v} next year.",)),
    FactKind("book", ("The Overstory", "Piranesi", "Dune", "Circe", "The Remains of the Day", "Project Hail Mary",
                      "Middlemarch", "The Name of the Wind"),
             ("I'm reading {v} right now and I can't put it down.", "Started {v} last night, stayed up until 2am.",
              "My book club picked {v} and I'm halfway through.", "Currently devouring {v}, what a story."),
             ("What book is {s} reading?", "Which novel has {s} been unable to put down?",
              "What is {s}'s book club reading?", "What is {s} currently reading?"),
             (),
             ("Someone recommended {v} to me but I haven't started it.",)),
    FactKind("instrument", ("cello", "ukulele", "piano", "saxophone", "drums", "violin", "banjo", "trumpet"),
             ("I've been practicing the {v} every evening.", "I bought a secondhand {v} and I'm teaching myself.",
              "My neighbors must hate me, I'm learning to play {v}.", "Took my first {v} lesson yesterday, my fingers hurt."),
             ("Which musical instrument is {s} learning?", "What instrument does {s} practice?",
              "What is {s} learning to play?", "What instrument did {s} buy?"),
             (),
             ("My dad played the {v} when I was a kid.",)),
    FactKind("bake", ("a lemon drizzle cake", "sourdough bread", "chocolate croissants", "an apple pie",
                      "banana bread", "a carrot cake", "cinnamon rolls", "macarons"),
             ("I baked {v} for my mom's birthday.", "Spent all Saturday making {v} from scratch.",
              "My kitchen smells amazing, I just made {v}.", "Finally nailed my grandmother's recipe for {v}."),
             ("What did {s} bake?", "What did {s} make in the kitchen on Saturday?",
              "What homemade treat did {s} prepare?", "Which recipe did {s} finally get right?"),
             (),
             ("I bought {v} from the bakery, I'm too lazy to bake.",)),
    FactKind("injury", ("ankle", "wrist", "knee", "shoulder", "lower back", "elbow", "collarbone", "thumb"),
             ("I sprained my {v} playing soccer, so I'm on the couch.", "Hurt my {v} at the gym, the doctor says rest.",
              "I fell off my bike and injured my {v}.", "My {v} is in a brace after I twisted it hiking."),
             ("How did {s} get hurt?", "What injury does {s} have?", "Which body part did {s} injure?",
              "Why is {s} resting at home?"),
             ("Physical therapy starts next week.",),
             ()),
    FactKind("move", ("Brooklyn", "the north side of town", "a farmhouse outside the city", "Seattle",
                      "a loft near the river", "Austin", "the suburbs", "Denver"),
             ("We're moving to {v} next month, boxes everywhere.", "We signed the lease for a place in {v}!",
              "Big news: we bought a house in {v}.", "Relocating to {v} for my partner's job."),
             ("Where is {s} moving?", "Where is {s} relocating to?", "Where did {s} buy a house?",
              "Where will {s} live after the move?"),
             (),
             ("My sister lives in {v}, it's pricey.",)),
    FactKind("niece", ("Olivia", "Amara", "Sofia", "Hazel", "Noor", "Ingrid", "Lucia", "Maeve"),
             ("My sister just had a baby girl named {v}!", "I'm an aunt now, little {v} was born on Tuesday.",
              "Welcome to the world, {v}, my brother's first daughter.", "Held my newborn niece {v} today, so tiny."),
             ("What is the name of {s}'s niece?", "What did {s}'s sibling name the new baby?",
              "Who was born in {s}'s family?", "What is the baby in {s}'s family called?"),
             (),
             ()),
    FactKind("car", ("Subaru Outback", "Honda Civic", "Tesla Model 3", "Volkswagen camper van", "Ford pickup truck",
                     "Mini Cooper", "Toyota Prius", "vintage Vespa"),
             ("I finally bought a used {v}.", "Traded in the old car for a {v} yesterday.",
              "Picked up my new {v} from the dealer this morning.", "Say hello to my {v}, she's a beauty."),
             ("What vehicle did {s} buy?", "What did {s} get at the dealership?",
              "What does {s} drive now?", "Which car did {s} purchase?"),
             (),
             ("I test drove a {v} once, not my style.",)),
    FactKind("volunteer", ("animal shelter", "food bank", "children's hospital", "community garden",
                           "homeless shelter", "public library", "beach cleanup", "senior center"),
             ("I volunteered at the {v} on Saturday morning.", "Spent the afternoon helping out at the {v}.",
              "I've started giving a few hours each week at the {v}.", "Signed up to volunteer regularly at the {v}."),
             ("Where did {s} volunteer?", "Where does {s} do charity work?",
              "Where does {s} help out each week?", "Where did {s} spend Saturday helping others?"),
             (),
             ("Our office is organizing a day at the {v}.",)),
    FactKind("concert", ("Radiohead", "Beyonce", "the Arctic Monkeys", "Coldplay", "Taylor Swift", "Kendrick Lamar",
                         "Fleetwood Mac", "Billie Eilish"),
             ("We saw {v} live last night, I lost my voice singing.", "Got tickets to {v} and the show was incredible.",
              "The {v} concert was everything I hoped.", "Still buzzing from seeing {v} perform on Friday."),
             ("Which artist did {s} see in concert?", "Who did {s} see perform live?",
              "What show did {s} go to?", "Which band or singer did {s} watch on stage?"),
             (),
             ("My brother is obsessed with {v}.",)),
    FactKind("language", ("Japanese", "Portuguese", "Italian", "Korean", "Arabic", "German", "Mandarin", "Greek"),
             ("I'm taking {v} lessons before our trip.", "Downloaded an app and I practice {v} every morning.",
              "My tutor says my {v} pronunciation is improving.", "I'm trying to learn {v} so I can talk with my in-laws."),
             ("What language is {s} learning?", "Which language does {s} study?",
              "What language is {s} practicing every morning?", "What language does {s} have a tutor for?"),
             (),
             ("I studied {v} in school but forgot all of it.",)),
    FactKind("allergy", ("peanuts", "shellfish", "cats", "penicillin", "bee stings", "gluten", "dairy", "pollen"),
             ("Turns out I'm allergic to {v}, the doctor confirmed.", "I had a bad reaction, I'm allergic to {v}.",
              "The allergy test came back: {v}.", "No more {v} for me, my body hates it."),
             ("What is {s} allergic to?", "What allergy does {s} have?", "What did {s}'s allergy test show?",
              "What does {s} react badly to?"),
             (),
             ()),
    FactKind("gift", ("a record player", "a telescope", "a espresso machine", "hiking boots", "a smartwatch",
                      "a camera lens", "a kayak", "a handmade quilt"),
             ("My partner gave me {v} for our anniversary.", "Opened my birthday present and it was {v}!",
              "Best gift ever: {v}, I cried a little.", "My family surprised me with {v}."),
             ("What gift did {s} receive?", "What present did {s} get?",
              "What was {s} surprised with?", "What did {s} unwrap on the special day?"),
             (),
             ("I'm thinking of buying {v} for my dad.",)),
    FactKind("degree", ("nursing", "computer science", "marine biology", "architecture", "psychology", "law",
                        "economics", "art history"),
             ("I got accepted into a master's program in {v}!", "Going back to school to study {v} this fall.",
              "My first semester of {v} classes starts in September.", "I enrolled at the university for a degree in {v}."),
             ("What is {s} going to study?", "What degree is {s} pursuing?",
              "What subject will {s} study at university?", "What program was {s} accepted into?"),
             (),
             ("I almost studied {v} instead of what I did.",)),
    FactKind("boardgame", ("Catan", "chess", "Dungeons and Dragons", "poker", "Scrabble", "Ticket to Ride",
                           "mahjong", "bridge"),
             ("Fridays are {v} night with my friends now.", "We started a weekly {v} group and I'm hooked.",
              "I lost at {v} again last night, my friends are ruthless.", "Our {v} sessions go until midnight every week."),
             ("What game does {s} play with friends?", "What do {s} and their friends play on weekends?",
              "What is {s}'s weekly game night about?", "What game keeps {s} up until midnight?"),
             (),
             ()),
    FactKind("fear", ("spiders", "heights", "deep water", "flying", "clowns", "thunderstorms", "snakes",
                      "public speaking"),
             ("I'm honestly terrified of {v}, always have been.", "You know me, {v} make me panic.",
              "I have a real phobia of {v}.", "Nothing scares me more than {v}."),
             ("What is {s} afraid of?", "What scares {s} the most?", "What phobia does {s} have?",
              "What makes {s} panic?"),
             (),
             ()),
    FactKind("room", ("bright yellow", "forest green", "navy blue", "terracotta", "lavender", "charcoal grey",
                      "coral pink", "teal"),
             ("We repainted the living room {v} this weekend.", "The bedroom walls are {v} now, I love it.",
              "Finished painting the kitchen, went with {v}.", "We chose {v} for the study, bold choice."),
             ("What color did {s} paint their room?", "What color are the walls in {s}'s home now?",
              "Which paint color did {s} choose?", "What shade did {s} pick for the walls?"),
             (),
             ("I'd never dare to paint a wall {v}.",)),
    FactKind("friend", ("Priya", "Tomasz", "Keiko", "Diego", "Fatima", "Liam", "Chiara", "Oren"),
             ("My old college roommate {v} came to visit us.", "{v} flew in from abroad and stayed with us all week.",
              "Had dinner with {v}, we hadn't seen each other in ten years.",
              "Spent the whole weekend catching up with {v}."),
             ("Who visited {s}?", "Which old friend did {s} catch up with?", "Who stayed with {s} last week?",
              "Who did {s} reconnect with?"),
             (),
             ()),
    FactKind("team", ("volleyball", "ultimate frisbee", "rugby", "basketball", "water polo", "softball",
                      "field hockey", "curling"),
             ("I joined a {v} team that plays on Tuesdays.", "Our {v} league starts next week, I'm nervous.",
              "Scored my first point in {v} last night!", "I'm the newest player on the office {v} team."),
             ("Which team sport does {s} play?", "What sport did {s} join a team for?",
              "What league is {s} part of?", "What does {s} play on Tuesdays?"),
             (),
             ("I used to watch {v} on TV with my grandpa.",)),
    FactKind("climb", ("the climbing gym", "the bouldering wall", "the indoor rock gym", "the crag by the lake",
                       "the climbing center", "the rope gym", "the outdoor cliffs", "the new bouldering hall"),
             ("I went to {v} yesterday and my forearms are destroyed.", "Spent the afternoon at {v}, finally sent a hard route.",
              "Tried {v} for the first time on Sunday.", "Back from {v}, I'm addicted to climbing now."),
             ("When did {s} go to the climbing gym?", "Where did {s} go climbing?",
              "What new activity did {s} try on the weekend?", "Where has {s} been climbing lately?"),
             (),
             ()),
]

SMALL_TALK = [
    "How was your week?", "Haha, that's awesome!", "I've been so busy with work lately.", "Did you sleep at all?",
    "The weather has been awful, it rained all day.", "What are you up to this weekend?", "Oh no, I'm sorry to hear that.",
    "That sounds like so much fun.", "I need a vacation honestly.", "Did you watch the game last night?",
    "I'm making pasta tonight, nothing fancy.", "Ugh, Mondays.", "Tell me everything!", "I can't believe it's already November.",
    "My phone died in the middle of the day, again.", "Traffic was terrible this morning.", "Same here, totally exhausted.",
    "We should grab coffee soon.", "That's wild.", "I'm proud of you, seriously.", "Long day, talk tomorrow?",
    "I finally cleaned out the garage.", "My boss moved the deadline again.", "I've been binge watching a cooking show.",
    "Do you want to come over on Saturday?", "Congrats!!", "What did you have for lunch?", "So true.",
    "I've been trying to drink more water.", "My neighbor's dog barked all night.", "Sounds like a plan.",
    "Let me know how it goes.", "I'm so glad you told me.", "I ordered takeout three times this week, oops.",
    "Happy Friday!", "Good luck tomorrow!", "I'm still thinking about that story you told me.", "Miss you!",
    "We had a family dinner on Sunday, very loud.", "I fixed the leaking tap myself, very proud.",
]

NAMES = ["Maria", "John", "Aisha", "Kenji", "Sofia", "Marcus", "Elena", "David", "Nadia", "Tom", "Leila", "Pablo",
         "Grace", "Omar", "Hannah", "Ravi", "Chloe", "Samuel", "Yuki", "Ben", "Zara", "Lucas", "Mei", "Ethan"]


def split_half(items: tuple[str, ...] | list[str], part: str) -> list[str]:
    """Even positions for dev, odd ones for test."""
    return [item for i, item in enumerate(items) if (i % 2 == 0) == (part == "dev")]


def conversation(rnd: random.Random, part: str, number: int, facts_per: int, sessions: int) -> dict[str, object]:
    names = rnd.sample(split_half(NAMES, part), 2)
    slots = [(kind, speaker) for kind in KINDS for speaker in names]
    chosen = rnd.sample(slots, facts_per)
    turns: list[str] = []
    questions: list[dict[str, object]] = []
    # Each fact lands in a random session; sessions are small talk with distractors around the facts.
    by_session: dict[int, list[tuple[FactKind, str]]] = {}
    distractors: dict[int, list[tuple[FactKind, str]]] = {}
    for fact in chosen:
        by_session.setdefault(rnd.randrange(sessions), []).append(fact)
        distractors.setdefault(rnd.randrange(sessions), []).append(fact)
    for session in range(sessions):
        lines: list[tuple[str, str, tuple[FactKind, str, str] | None, bool]] = []
        for _ in range(rnd.randrange(14, 22)):
            lines.append((rnd.choice(names), rnd.choice(SMALL_TALK), None, False))
        for kind, speaker in by_session.get(session, []):
            value = rnd.choice(split_half(kind.values, part))
            at = rnd.randrange(len(lines) + 1)
            statement = rnd.choice(split_half(kind.statements, part)).format(v=value)
            block = [(speaker, statement, (kind, speaker, value), True)]
            if kind.follow_ups and rnd.random() < 0.5:
                block.append((speaker, rnd.choice(kind.follow_ups), (kind, speaker, value), True))
            other = names[1] if speaker == names[0] else names[0]
            block.append((other, rnd.choice(["No way!", "That's amazing!", "Wow, tell me more.", "Oh nice!"]), None,
                          False))
            lines[at:at] = block
        # Distractors: the other person talks about the same topics elsewhere in the session.
        for kind, speaker in distractors.get(session, []):
            if kind.distractors:
                other = names[1] if speaker == names[0] else names[0]
                value = rnd.choice(split_half(kind.values, part))
                lines.insert(rnd.randrange(len(lines) + 1), (other, rnd.choice(kind.distractors).format(v=value),
                                                             None, False))
        turns_of_fact: dict[tuple[str, str], list[int]] = {}
        for speaker, text, fact, evidence in lines:
            if fact is not None and evidence:
                turns_of_fact.setdefault((fact[0].name, fact[1]), []).append(len(turns))
            turns.append(f"{speaker}: {text}")
        for kind, speaker in by_session.get(session, []):
            questions.append({
                "question": rnd.choice(split_half(kind.questions, part)).format(s=speaker),
                "kind": kind.name, "evidence": turns_of_fact[(kind.name, speaker)]})
    return {"id": f"{part}-{number:02d}", "speakers": names, "turns": turns, "questions": questions}


def build(part: str, conversations: int, seed: int) -> dict[str, object]:
    rnd = random.Random(seed)
    return {"part": part, "conversations": [conversation(rnd, part, n, 35, 22) for n in range(conversations)]}


def main() -> None:
    DATA.mkdir(exist_ok=True)
    for part, count, seed in (("dev", 6, 1301), ("test", 10, 7919)):
        data = build(part, count, seed)
        path = DATA / f"memory_eval_{part}.json"
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        convs = data["conversations"]
        assert isinstance(convs, list)
        print(f"{path}: {len(convs)} conversations, {sum(len(c['turns']) for c in convs)} turns,"
              f" {sum(len(c['questions']) for c in convs)} questions")


if __name__ == "__main__":
    main()
