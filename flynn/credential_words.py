"""The words that announce a credential, in the languages Flynn is spoken to in (en, de, fr, es,
it, pt, nl), as regular-expression alternatives for ``flynn.credentials``; and the ordinary words
that, after such a word, say something about the credential rather than being it."""

from __future__ import annotations

PASSWORDS = (
    r"pass(?:words?|wd|phrases?)|passwort(?:e|s)?|kennw(?:o|ö)rt(?:er)?|zugangsdaten"
    r"|mots?\s+de\s+passe|mdp|contrase(?:ñ|n)as?|senhas?|palavras?[\s-]passe"
    r"|parola\s+d'ordine|wachtwoord(?:en)?|credentials?|login\s+details"
    r"|wi-?fi(?:[\s_-]?(?:password|key|passwort|schlüssel|clé|clave|chiave|senha))"
)
"""A password: whatever follows it (not an ordinary word) is the password."""

CODES = (
    r"(?:2fa|mfa|two[\s-]factor|backup|recovery|one[\s-]time|verification|confirmation"
    r"|security|login|sign[\s-]in|auth(?:entication)?|access|entry|door|gate|garage|alarm"
    r"|lock|safe|building|front[\s-]door|sms|otp|pin|key[\s-]?pad|pass)[\s-]?codes?"
    r"|codes?\s+(?:to|for|of)\s+(?:the\s+|my\s+|our\s+)?(?:front\s+|back\s+|main\s+)?"
    r"(?:door|gate|garage|alarm|safe|building|lockbox|key\s*box|house|flat|apartment|office"
    r"|locker|bike\s+lock|padlock)"
    r"|pins?|pin[\s-]?(?:codes?|numbers?|nummer)|otps?|cvv2?|cvc2?|digicode"
    r"|(?:safe\s+)?combination|geheimzahl|pincode|pin-code"
    r"|(?:zugangs|tür|tor|alarm|garagen|sicherheits|bestätigungs|einmal|backup|wiederherstellungs"
    r"|haustür|schloss|tresor|anmelde)[\s-]?codes?"
    r"|codes?\s+(?:pin|secret|d'accès|de\s+(?:la\s+)?porte|de\s+l'alarme|de\s+sécurité"
    r"|de\s+vérification|de\s+confirmation|de\s+secours|de\s+récupération|du\s+portail"
    r"|de\s+l'immeuble)"
    r"|c(?:ó|o)digos?\s+(?:pin|secreto|de\s+acceso|de\s+acesso|de\s+la\s+puerta|da\s+porta"
    r"|do\s+port(?:ã|a)o|del\s+port(?:ó|o)n|de\s+(?:la\s+)?alarma|do\s+alarme"
    r"|de\s+seguridad|de\s+segurança|de\s+verificaci(?:ó|o)n|de\s+verifica(?:çã|ca)o"
    r"|de\s+respaldo|de\s+backup|de\s+recuperaci(?:ó|o)n|de\s+recupera(?:çã|ca)o)"
    r"|codic[ei]\s+(?:pin|segreto|di\s+accesso|della\s+porta|del\s+cancello|dell'allarme"
    r"|di\s+sicurezza|di\s+verifica|di\s+backup|di\s+recupero)"
    r"|(?:toegangs|deur|poort|alarm|beveiligings|verificatie|back-?up|herstel)codes?"
)
"""A code: what follows it is the code only when it holds a digit ('the door code is 4711',
but 'the pin is bent' and 'the door code is on the fridge' are not codes)."""

KEYS = (
    r"(?:api|access|secret|private|ssh|signing|encryption|master|license|licence|client)"
    r"[\s_-]?keys?|api[\s-]schlüssel|clés?\s+(?:api|d'api|secrète|privée)"
    r"|claves?\s+(?:api|de\s+api|secreta|privada)|chiavi?\s+(?:api|segreta|privata)"
    r"|chaves?\s+(?:api|de\s+api|secreta|privada)|api[\s-]sleutel"
    r"|(?:auth|access|bearer|api|bot|refresh|session|github|slack|discord|telegram)[\s_-]?tokens?"
    r"|tokens?|client[\s_-]secrets?|secret|seed[\s_-]phrases?|recovery[\s_-](?:phrases?|keys?)"
    r"|credit[\s_-]?card(?:[\s_-]?numbers?)?|card[\s_-]?numbers?|iban"
    r"|social[\s_-]security(?:[\s_-]numbers?)?|ssn"
)
"""A key or a token: what follows it is one when it holds a digit or looks generated (a long
run without spaces); 'the token is shiny' and 'the secret is patience' are not keys."""

SEVERAL = (
    r"credentials?|login\s+details|zugangsdaten|pass(?:words|phrases)|passw(?:o|ö)rte[rs]?"
    r"|kennw(?:o|ö)rter|mots\s+de\s+passe|contrase(?:ñ|n)as|senhas|palavras[\s-]passe"
    r"|wachtwoorden"
)
"""The words of ``PASSWORDS`` for several credentials or a whole login: never followed bare by
one, as 'wifi password GuestNet2024' is; what stands there is an id ('credential 4471-XK',
'credentials v2.3.1', 'passwords 2FA-enabled')."""

COPULAS = (
    r"is|was|are|were|will\s+be|becomes|ist|war|sind|lautet|lauten|heißt|est|était|sont"
    r"|es|era|son|eran|è|sono|é|são|era|zijn|wordt|luidt"
)
"""The verbs between a credential's word and its value ('my password is ...', 'Passwort
lautet ...', 'mot de passe est ...')."""

CHANGES = (
    r"change[sd]?|changing|set|reset|update[sd]?|make|ändere?|änderte|setze?|stelle?"
    r"|change[rz]?|changé|mets|modifie[rz]?|cambia(?:r|do)?|cambie|pon|modifica(?:re)?"
    r"|imposta(?:re)?|mude|mudar|muda|altere|alterar|altera|troque|wijzig|verander|zet"
)
"""The verbs of changing a credential to a new value ('change my password to ...')."""

CHANGED_TO = r"to|into|auf|zu|in|en|pour|par|a|por|para|naar|as|como"

QUALIFIERS = (
    r"for|of|on|at|to|from|für|von|vom|zum|zur|bei|de|du|des|pour|del|della|dello|di|da|do"
    r"|dos|das|para|van|voor|bij|naar"
)
"""What may stand between the word and its verb: 'the password for the router is ...'."""

OWNERS = (
    r"my|the|our|your|his|her|their|its|this|that|mein|meine|meinen|dein|deine|unser|unsere"
    r"|der|die|das|den|mon|ma|mes|ton|ta|notre|votre|le|la|les|mi|tu|su|nuestra|nuestro|el"
    r"|il|lo|mio|mia|tuo|tua|nostro|nostra|o|a|meu|minha|seu|sua|nosso|nossa|mijn|je|jouw"
    r"|ons|onze|de|het|uw"
)

NOW = r"now|just|jetzt|nun|maintenant|désormais|ahora|adesso|ora|agora|nu|voortaan"

ORDINARY = frozenset(
    """
    wrong incorrect invalid expired old new weak strong long short lost stolen leaked reset
    changed missing broken gone safe secure required needed here there the a an my your our
    their this that it not too very in on at for of to and or something anything whatever
    nothing one same different hard easy simple complicated written saved stored known
    forgotten somewhere what which why how who where when still also always never probably
    locked blocked disabled enabled ok okay fine correct right valid working compromised
    being now just mine yours ours his hers theirs set empty blank unknown secret private
    please again sent attached below above inside written
    falsch ungültig abgelaufen alt neu schwach stark lang kurz verloren gestohlen geändert
    richtig sicher unsicher nicht zu sehr noch auch immer nie der die das ein eine mein
    meine dein deine unser hier da irgendwo gesperrt vergessen
    faux incorrect invalide expiré ancien nouveau nouvelle faible fort long court perdu volé
    changé correct sûr pas trop très le la les un une mon ma mes ici là oublié bloqué
    encore toujours jamais aussi
    incorrecto incorrecta inválido inválida caducado caducada antiguo antigua nuevo nueva
    débil fuerte largo larga corto corta perdido perdida robado robada cambiado cambiada
    correcto correcta seguro segura no demasiado muy el la un una mi aquí allí olvidado
    olvidada bloqueado bloqueada todavía también siempre nunca
    sbagliato sbagliata scaduto scaduta vecchio vecchia nuovo nuova debole forte lungo lunga
    corto corta perso persa rubato rubata cambiato cambiata giusto giusta sicuro sicura non
    troppo molto il lo la un una mio mia qui là dimenticato dimenticata bloccato bloccata
    ancora anche sempre mai
    errado errada inválido inválida expirado expirada antigo antiga novo nova fraco fraca
    forte longo longa curto curta perdido perdida roubado roubada mudado mudada certo certa
    seguro segura não demais muito o os as um uma meu minha aqui ali esquecido esquecida
    bloqueado bloqueada ainda também sempre nunca
    fout ongeldig verlopen oud oude nieuw nieuwe zwak sterk lang kort verloren gestolen
    gewijzigd juist veilig niet te erg heel de het een mijn hier daar vergeten geblokkeerd
    nog ook altijd nooit
    """.split()
)
"""Words that, right after 'my password is', describe it ('my password is wrong',
'mein Passwort ist abgelaufen'); a password that is one of these words is not caught by its
announcement (a careful user does not pick 'wrong' as a password)."""

PLACEHOLDERS = frozenset(
    "true false null none nil yes no undefined changeme xxx xxxx xxxxx ... *** ****".split()
)
"""Values in pasted config that hold no credential (``password: null``)."""
