"""The English example: Alex's router case, then a move and a plan change; Priya's late
parcel interleaved with it (see make_examples.py)."""

from __future__ import annotations

from spanish import Chat

TRIES = [
    (
        "update the firmware from the NetHub app (Settings > Router > Firmware)",
        "Done, it went from 2.1.4 to 2.3.0. Dropped again 25 minutes later.",
        "Firmware 2.3.0 installed; drops continue about every 25 minutes.",
    ),
    (
        "move the 2.4 GHz network from auto to channel 6",
        "Changed to channel 6. Lasted 40 minutes this time, then dropped.",
        "Channel 6 helped a bit (40 minutes) but did not fix it.",
    ),
    (
        "try channel 11 instead, then check the 5 GHz band on its own",
        "Channel 11 was the same. On 5 GHz only it dropped after 30 minutes too.",
        "Both bands drop, so it is not interference on one channel.",
    ),
    (
        "turn off the DFS channels in the 5 GHz settings",
        "DFS is off now. Still dropping, the status light blinks amber when it happens.",
        "An amber blink during drops means the router is losing its WAN link, not Wi-Fi.",
    ),
    (
        "plug a laptop into the router with a cable and run a ping for an hour",
        "Wired ping lost connection at 16:42 and 17:19. So it's not the Wi-Fi?",
        "Right: the wired link drops too, so the router or the line is at fault.",
    ),
    (
        "swap the fibre ONT cable for the spare one in the box",
        "Swapped it. Dropped at 20:05 anyway.",
        "Cable ruled out. Next is a factory reset to rule out the configuration.",
    ),
    (
        "check the router's event log under Settings > Advanced > Logs",
        "It says 'WAN PHY link down' each time, at 16:42, 17:19 and 18:03.",
        "'WAN PHY link down' confirms the fibre port loses the link.",
    ),
    (
        "plug the ONT into the router's second WAN port",
        "Didn't know it had one! Same thing though, dropped at 19:10.",
        "Both WAN ports drop, so it is the router or the ONT.",
    ),
    (
        "reboot the ONT (the small white box) by unplugging it for 30 seconds",
        "Rebooted it. The ONT lights stay green even when the router drops.",
        "The ONT keeps its link while the router drops: the router is the faulty part.",
    ),
    (
        "hold the reset button for 10 seconds and set it up again from scratch",
        "Factory reset done, set up again with the same network name. Dropped after an hour.",
        "A fresh configuration still drops: this points to faulty hardware.",
    ),
]

PRIYA = [
    (
        "Hi, my order #B-1190 was supposed to arrive yesterday, June 8.",
        "Hi Priya. Order #B-1190 (a desk lamp, $32.50) shows as delayed at the depot.",
    ),
    (
        "Do you know when it will come?",
        "The carrier now estimates June 11, between 10:00 and 14:00.",
    ),
    (
        "I won't be home on the 11th. Can it go to a pickup point?",
        "Yes, I can redirect it to the pickup point at 210 Pine St; it would be there June 11.",
    ),
    ("Yes please, do that.", "Done: #B-1190 goes to 210 Pine St, ready from June 11."),
    (
        "Do I need anything to collect it?",
        "A photo ID and the code PK-5567, which I've also emailed you.",
    ),
    (
        "Great. And the delivery fee, since it was late?",
        "I've refunded the $4.99 delivery fee for the delay; it shows in 3–5 business days.",
    ),
    ("Thanks, that's fair.", "You're welcome. Anything else about #B-1190?"),
    (
        "Can I return it if I don't like it?",
        "Yes, within 30 days of pickup, free of charge at the same pickup point.",
    ),
    ("Perfect. That's all.", "Thanks, Priya. Enjoy the lamp!"),
    ("Oh wait, what was the pickup code again?", "It's PK-5567, valid until June 25."),
    ("Got it, thanks!", "Have a nice day!"),
]


def support_en(alex: Chat, priya: Chat) -> tuple[Chat, Chat]:
    for user, bot in PRIYA:
        priya.say(user, bot)
    _router(alex)
    _move(alex)
    return alex, priya


def _router(c: Chat) -> None:
    for user, bot in [
        ("Hi, I bought a NetHub X2 router, order #A-7781, and the internet keeps dropping.",
         "Hi, I'm Sam from support. I see order #A-7781: NetHub X2, $149.99, delivered June 5. "
         "How often does it drop?"),
        ("Every 20 minutes or so, for a minute or two.",
         "Thanks. I've opened ticket CS-30418. Which plan are you on?"),
        ("Fiber 300, $59 a month.", "Noted: Fiber 300 at $59.00/month. Let's test a few things."),
        ("My email is alex.morgan@example.com in case you need it.",
         "Thanks, alex.morgan@example.com is on the ticket CS-30418."),
    ]:  # fmt: skip
        c.say(user, bot)
    nexts = ["What next?", "OK, what else?", "Next step?", "Alright, now what?", "Done. Next?"]
    for number, (step, result, note) in enumerate(TRIES, start=1):
        c.say(
            c.pick(nexts) if number > 1 else "Where do I start?",
            f"Step {number}: {step}. Tell me what happens.",
        )
        c.say(result, note)
        if number == 4:
            c.later(days=1, hour=16)
            c.say("Back again, sorry, I had to go to work.", "No problem, we carry on.")
    for user, bot in [
        ("So is the router broken?",
         "Very likely. Since #A-7781 is within 30 days, I can send a replacement NetHub X2 now."),
        ("Yes please. Do I send the old one first?",
         "No, keep it until the new one arrives; a prepaid return label RT-66120 comes with it."),
        ("When will it arrive?", "It ships today and should arrive on June 13 by 8 pm."),
        ("Will I need to set everything up again?",
         "Yes, but the NetHub app can restore your backup; save one now under Settings > Backup."),
        ("Backup saved.", "Great. Ticket CS-30418 stays open until the new router works."),
    ]:  # fmt: skip
        c.say(user, bot)
    c.later(days=3, hour=19)
    for user, bot in [
        ("The new router came. Serial NHX2-40981.",
         "Perfect, NHX2-40981 matches the replacement. Restore your backup and test it."),
        ("Restored. No drops in 3 hours!", "Excellent. Let's give it a day to be sure."),
        ("Still perfect after a full day.", "Great news. I'm closing ticket CS-30418 as solved."),
        ("How do I send the old one back?",
         "Box it, print label RT-66120, and drop it at any post office within 14 days."),
        ("Sent it back today.", "Thanks, I'll confirm when the warehouse receives it."),
        ("Did it arrive?", "Yes, received June 20. Nothing more to do on #A-7781."),
    ]:  # fmt: skip
        c.say(user, bot)


def _move(c: Chat) -> None:
    c.later(days=5, hour=11)
    for user, bot in [
        ("Different question: I'm moving house on July 15. Can I take my fiber service?",
         "Yes. What is the new address?"),
        ("48 Elm Street, Apt 3, Portland, OR 97205.",
         "Fiber is available at 48 Elm Street, Apt 3, Portland, OR 97205. I can book the move."),
        ("Please do, for July 15.",
         "Booked: service moves on July 15; a technician activates it between 8:00 and 12:00."),
        ("Will there be a fee?", "Moving is free if you stay on contract; no fee."),
        ("While we're at it, what would Fiber 1000 cost?",
         "Fiber 1000 is $79.00/month, $20 more than your Fiber 300 at $59.00."),
        ("And if I switch now, mid-month?",
         "You'd pay a prorated $13.33 for the rest of this billing period, June 10 to July 9."),
        ("Let's switch to Fiber 1000 from the move date instead.",
         "Good idea: Fiber 1000 starts July 15 at the new address, so no prorated charge."),
        ("Will the NetHub X2 handle 1000?",
         "Yes, the X2 supports up to 2.5 Gbps on its WAN port."),
        ("Do I need a new contract?", "No, it's an upgrade on the same contract, no new term."),
        ("What's my first bill at the new address going to be?",
         "July 10 to August 9: $59.00 until July 14 plus $79.00 prorated from July 15, "
         "about $75.13 in total."),
        ("Can you email me a summary?",
         "Sent to alex.morgan@example.com: move on July 15, Fiber 1000 from July 15."),
        ("Can the technician come after 10?",
         "I've set the visit window to 10:00-12:00 on July 15."),
        ("And my old address, do I return anything there?",
         "No, the fiber box there stays; nothing to return."),
        ("What if the move gets delayed?",
         "Just reply here before July 13 and we'll change the date at no cost."),
        ("Actually it might be July 18.",
         "No problem: do you want me to move the booking to July 18 now?"),
        ("Not yet, I'll confirm on Friday.",
         "Fine, the booking stays on July 15 until you confirm."),
        ("Confirmed: July 18, same time window please.",
         "Done: move and Fiber 1000 now start on July 18, technician 10:00-12:00."),
        ("Does that change the first bill?",
         "Yes: $59.00 until July 17 and Fiber 1000 from July 18, about $73.19 in total."),
        ("Will my Wi-Fi name and password stay the same?",
         "Yes, the router keeps its settings; just plug it in at Elm Street."),
        ("Can I keep my phone number on the new line?",
         "Your plan has no phone line, only internet, so nothing to transfer."),
        ("Is there a discount for the upgrade?",
         "Yes: the first month of Fiber 1000 is $59.00 instead of $79.00 as a loyalty offer."),
        ("Nice. Does that change the first bill again?",
         "Yes, the July 18 to August 9 part is billed at the $59.00 rate, so about $59.00 "
         "in total."),
        ("Can you resend the summary email with all that?",
         "Sent to alex.morgan@example.com: move and Fiber 1000 on July 18, technician "
         "10:00-12:00, first month $59.00."),
        ("What's the technician's name?", "We'll text you the name the day before the visit."),
        ("And my ticket number for the move?", "It's MV-88213."),
        ("OK, thanks for all the help.",
         "You're welcome, Alex. Good luck with the move to Elm Street!"),
    ]:  # fmt: skip
        c.say(user, bot)
