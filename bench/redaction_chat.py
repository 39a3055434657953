# ruff: noqa: RUF001  (Turkish text: its dotless i is the point, not a look-alike)
"""The second corpus of ``bench/redaction.py``: support-chat paragraphs in several languages.

The first corpus (``bench/redaction.py``'s own templates) was written beside the detectors, one
value to a line, and a corpus written beside the code flatters it. This one is built from
templates that no test uses: paragraphs of two to five sentences as customers and agents write
them in English, German, French, Spanish, Italian, Portuguese, Dutch, Polish, Turkish and
Japanese (Turkish "İ" makes the lower-cased text longer than the text: offsets must not slide),
a third of them with no personal data at all, and local near-misses beside the values (dates as
each country writes them, prices with decimal commas, postcodes, customer and order numbers,
times, versions, tracking numbers). The values come from the labelled generators of
``bench/redaction.py`` (international phone forms outside English paragraphs, e-mail addresses
with accented local parts and domains among them), so every span is known by construction.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

import phonenumbers

from bench import redaction as base

# Sentences by language. Slots as in bench/redaction.py (TRUE: labelled, NEAR: near-misses, plus
# the local ones below); "{{" and "}}" are literal braces.
GREETINGS: dict[str, tuple[str, ...]] = {
    "en": ("Hi there,", "Hello,", "Good morning!", "Hey support team,"),
    "de": ("Hallo,", "Guten Tag,", "Sehr geehrte Damen und Herren,", "Moin,"),
    "fr": ("Bonjour,", "Bonsoir,", "Madame, Monsieur,", "Salut,"),
    "es": ("Hola,", "Buenos días,", "Buenas tardes,", "Estimado equipo,"),
    "it": ("Ciao,", "Buongiorno,", "Salve,", "Gentile assistenza,"),
    "pt": ("Olá,", "Bom dia,", "Boa tarde,", "Prezados,"),
    "nl": ("Hallo,", "Goedemorgen,", "Beste klantenservice,", "Hoi,"),
    "pl": ("Dzień dobry,", "Witam,", "Cześć,", "Szanowni Państwo,"),
    "tr": ("Merhaba,", "İyi günler,", "Selam,", "Sayın yetkili,"),
    "ja": ("こんにちは。", "お世話になっております。", "はじめまして。", "失礼いたします。"),
}

PLAIN: dict[str, tuple[str, ...]] = {
    "en": (
        "I've been a customer for years and this never happened before.",
        "The app keeps logging me out after a minute or so, even on wifi.",
        "Could you please check what went wrong and get back to me?",
        "Thanks a lot for the quick answer, that solved it.",
        "I tried clearing the cache and reinstalling but nothing changed.",
    ),
    "de": (
        "Ich bin seit Jahren Kundin und so etwas ist mir noch nie passiert.",
        "Die App meldet mich nach einer Minute wieder ab, auch im WLAN.",
        "Könnten Sie bitte prüfen, was schiefgelaufen ist?",
        "Vielen Dank für die schnelle Antwort, jetzt funktioniert alles.",
        "Ich habe den Cache geleert und die App neu installiert, leider ohne Erfolg.",
    ),
    "fr": (
        "Je suis client depuis des années et c'est la première fois que ça arrive.",
        "L'application me déconnecte au bout d'une minute, même en wifi.",
        "Pourriez-vous vérifier ce qui s'est passé et me répondre ?",
        "Merci beaucoup pour la réponse rapide, ça a réglé le problème.",
        "J'ai vidé le cache et réinstallé l'appli, mais rien n'a changé.",
    ),
    "es": (
        "Soy cliente desde hace años y nunca me había pasado algo así.",
        "La aplicación me cierra la sesión después de un minuto, incluso con wifi.",
        "¿Podrían revisar qué ha fallado y responderme, por favor?",
        "Muchas gracias por la respuesta tan rápida, ya está solucionado.",
        "He borrado la caché y reinstalado la app, pero sigue igual.",
    ),
    "it": (
        "Sono cliente da anni e non mi era mai successo.",
        "L'app mi disconnette dopo un minuto, anche con il wifi.",
        "Potreste verificare cosa è andato storto e farmi sapere?",
        "Grazie mille per la risposta veloce, ora funziona.",
    ),
    "pt": (
        "Sou cliente há anos e isso nunca tinha acontecido.",
        "O aplicativo me desconecta depois de um minuto, mesmo no wi-fi.",
        "Vocês poderiam verificar o que deu errado e me responder?",
        "Muito obrigado pela resposta rápida, resolveu o problema.",
    ),
    "nl": (
        "Ik ben al jaren klant en dit is me nog nooit overkomen.",
        "De app logt me na een minuut uit, ook op wifi.",
        "Kunt u nagaan wat er misging en mij laten weten?",
        "Bedankt voor het snelle antwoord, het werkt weer.",
    ),
    "pl": (
        "Jestem klientem od lat i nigdy wcześniej się to nie zdarzyło.",
        "Aplikacja wylogowuje mnie po minucie, nawet przez wifi.",
        "Czy mogliby Państwo sprawdzić, co poszło nie tak?",
        "Dziękuję za szybką odpowiedź, wszystko już działa.",
    ),
    "tr": (
        "Yıllardır müşterinizim ve böyle bir şey hiç yaşamadım.",
        "Uygulama İnternet bağlantısı olsa bile bir dakika sonra oturumu kapatıyor.",
        "Lütfen neyin yanlış gittiğini kontrol edip bana dönüş yapar mısınız?",
        "Hızlı cevabınız için çok teşekkürler, sorun çözüldü.",
    ),
    "ja": (
        "長年利用していますが、このようなことは初めてです。",
        "Wi-Fi 接続でも、アプリが一分ほどでログアウトしてしまいます。",
        "原因を確認して、ご連絡いただけますでしょうか。",
        "迅速なご対応ありがとうございました。解決しました。",
    ),
}

# Sentences with personal data (and near-misses beside them).
PII: dict[str, tuple[str, ...]] = {
    "en": (
        "My card {card} was charged {price} twice on {date_us}, order {order}.",
        "You can reach me at {email} or on {phone} after {time}.",
        "Please send the refund to {iban}, reference {invoice}.",
        "The login from {ip} on {iso} wasn't me, I'm in {city}.",
        "For the tax form: SSN {ssn}, ZIP {zip}.",
        "Our dev pasted {secret} into the ticket {jira}, please scrub it.",
        "I'll update the phone on file to {phone_intl} as you asked.",
    ),
    "de": (
        "Meine Karte {card} wurde am {date_de} zweimal mit {price_eu} belastet.",
        "Sie erreichen mich unter {phone_intl} oder per Mail an {email_intl}.",
        "Bitte überweisen Sie die Erstattung auf {iban} (Kundennummer {kdnr}).",
        "Der Zugriff kam von {ip}, ich wohne in {plz} Hamburg.",
        "Unser Entwickler hat versehentlich {secret} im Chat gepostet.",
        "Rechnung {invoice} über {price_eu}, bezahlt mit der Karte {card}.",
    ),
    "fr": (
        "Ma carte {card} a été débitée deux fois de {price_eu} le {date_de}.",
        "Vous pouvez me joindre au {phone_intl} ou à {email_intl}.",
        "Merci de rembourser sur le compte {iban}, commande n° {order}.",
        "La connexion depuis {ip} à {time} n'était pas moi.",
        "J'ai collé ma clé {secret} par erreur, pouvez-vous l'effacer ?",
    ),
    "es": (
        "Mi tarjeta {card} tiene dos cargos de {price_eu} del {date_de}.",
        "Me pueden contactar en el {phone_intl} o en {email_intl}.",
        "Por favor, hagan la devolución a la cuenta {iban}, pedido {order}.",
        "El acceso desde {ip} el {date_de} a las {hm} no fui yo.",
    ),
    "it": (
        "La mia carta {card} è stata addebitata due volte per {price_eu}.",
        "Potete contattarmi al {phone_intl} oppure a {email_intl}.",
        "Rimborso sul conto {iban}, ordine {order} del {date_de}.",
    ),
    "pt": (
        "Meu cartão {card} foi cobrado duas vezes em {date_de}, pedido {order}.",
        "Podem me ligar no {phone_intl} ou escrever para {email_intl}.",
        "Favor estornar para o IBAN {iban}, fatura {invoice}.",
    ),
    "nl": (
        "Mijn kaart {card} is op {date_de} twee keer belast voor {price_eu}.",
        "U kunt mij bereiken op {phone_intl} of via {email_intl}.",
        "Graag terugstorten op {iban}, klantnummer {kdnr}.",
        "Er werd ingelogd vanaf {ip}, postcode {nl_postcode}.",
    ),
    "pl": (
        "Moja karta {card} została obciążona dwa razy kwotą {price_eu}.",
        "Proszę o kontakt pod numerem {phone_intl} lub na {email_intl}.",
        "Zwrot proszę przelać na rachunek {iban}, zamówienie {order}.",
    ),
    "tr": (
        "Kartım {card} İstanbul'da {date_de} tarihinde iki kez çekildi.",
        "Bana {phone_intl} numarasından ya da {email_intl} adresinden ulaşabilirsiniz.",
        "İade için IBAN: {iban}, sipariş {order}.",
        "İzmir'den değil, {ip} adresinden giriş yapılmış.",
    ),
    "ja": (
        "カード番号 {card} で {date_iso} に二重請求されています。",
        "連絡先は {phone_intl} 、メールは {email} です。",
        "返金先の口座は {iban} でお願いします。注文番号 {order} 。",
        "{ip} からのログインは私ではありません。",
    ),
}

# Sentences with near-misses only (nothing labelled).
NEAR_ONLY: dict[str, tuple[str, ...]] = {
    "en": (
        "Order {order} shipped on {date_us}, tracking {tracking}, total {price}.",
        "I'm on version {version}, build {chrome}, and it crashed at {time}.",
        "The card ending {masked} is the old one; invoice {invoice}.",
        "My account number is {account} and the order id is {order16}.",
    ),
    "de": (
        "Bestellung {order} vom {date_de}, Sendungsnummer {tracking}, Summe {price_eu}.",
        "Kundennummer {kdnr}, Lieferung an {plz} Berlin um {hm} Uhr.",
        "Ich nutze Version {version} auf Android, Build {chrome}.",
    ),
    "fr": (
        "Commande {order} du {date_de}, total {price_eu}, code postal {plz}.",
        "Version {version}, le bug arrive vers {hm}.",
    ),
    "es": ("Pedido {order} del {date_de}, total {price_eu}, código postal {plz}.",),
    "it": ("Ordine {order} del {date_de}, totale {price_eu}, CAP {plz}.",),
    "pt": ("Pedido {order} de {date_de}, total {price_eu}, versão {version}.",),
    "nl": ("Bestelling {order} van {date_de}, totaal {price_eu}, postcode {nl_postcode}.",),
    "pl": ("Zamówienie {order} z dnia {date_de}, kwota {price_eu}, kod {pl_postcode}.",),
    "tr": ("Sipariş {order}, tarih {date_de}, tutar {price_eu}, sürüm {version}.",),
    "ja": ("注文番号 {order} 、{date_iso} 発送、合計 {price_yen} 。",),
}

CLOSINGS: dict[str, tuple[str, ...]] = {
    "en": ("Thanks, {name}", "Best regards", "Cheers"),
    "de": ("Viele Grüße", "Mit freundlichen Grüßen, {name}", "Danke!"),
    "fr": ("Cordialement", "Merci d'avance, {name}", "Bonne journée"),
    "es": ("Saludos", "Gracias, {name}", "Un saludo"),
    "it": ("Cordiali saluti", "Grazie, {name}"),
    "pt": ("Atenciosamente", "Obrigado, {name}"),
    "nl": ("Met vriendelijke groet", "Groetjes, {name}"),
    "pl": ("Pozdrawiam", "Z poważaniem, {name}"),
    "tr": ("Saygılarımla", "Teşekkürler, {name}"),
    "ja": ("よろしくお願いいたします。", "以上です。"),
}

LANGUAGES = tuple(GREETINGS)

# International phone forms only (a national number outside the US means nothing in region US).
INTL = ("GB", "DE", "FR", "ES", "IT", "NL", "PL", "TR", "JP", "PT", "BR", "CH", "AT", "BE")


def phone_intl(rng: random.Random) -> str:
    number = base._valid_number(rng, rng.choice(INTL))
    if rng.random() < 0.7:
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


LOCAL_PARTS = ("josé", "müller", "françois", "zoë", "łukasz", "çağla", "joão", "renée", "ana")
DOMAINS_INTL = ("exämple.de", "correo.es", "poczta.pl", "posta.it", "exemple.fr", "örnek.com.tr")


def email_intl(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return base.email(rng)
    local = rng.choice(LOCAL_PARTS) + rng.choice([".", "_", ""]) + rng.choice(base.LAST)
    return f"{local}{rng.randint(1, 99)}@{rng.choice(DOMAINS_INTL)}"


def _d(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


TRUE: dict[str, tuple[str, Callable[[random.Random], str]]] = {
    **base.TRUE,
    "phone_intl": ("phone", phone_intl),
    "email_intl": ("email", email_intl),
}
NEAR: dict[str, Callable[[random.Random], str]] = {
    **base.NEAR,
    "date_us": lambda r: f"{r.randint(1, 12)}/{r.randint(1, 28)}/2026",
    "date_de": lambda r: f"{r.randint(1, 28):02d}.{r.randint(1, 12):02d}.{r.randint(2024, 2026)}",
    "date_iso": lambda r: f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
    "hm": lambda r: f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}",
    "price_eu": lambda r: f"{r.randint(1, 9)}.{r.randint(100, 999)},{r.randint(0, 99):02d} €",
    "price_yen": lambda r: f"{r.randint(1, 99)},{r.randint(100, 999)}円",
    "kdnr": lambda r: str(r.randint(10_000_000, 99_999_999)),
    "plz": lambda r: f"{r.randint(10000, 99999)}",
    "nl_postcode": lambda r: (
        f"{r.randint(1000, 9999)} {r.choice('ABCDEFGHJKLMNPRSTVWXZ')}"
        f"{r.choice('ABCDEFGHJKLMNPRSTVWXZ')}"
    ),
    "pl_postcode": lambda r: f"{r.randint(10, 99)}-{_d(r, 3)}",
}


def paragraph(rng: random.Random) -> str:
    """One message's template: a greeting, two to four sentences, a closing; a third of them
    without personal data (plain sentences and near-misses only)."""
    lang = rng.choice(LANGUAGES)
    with_pii = rng.random() >= 1 / 3
    sentences = [rng.choice(GREETINGS[lang])]
    for _ in range(rng.randint(2, 4)):
        roll = rng.random()
        if with_pii and roll < 0.45:
            sentences.append(rng.choice(PII[lang]))
        elif roll < 0.7:
            sentences.append(rng.choice(NEAR_ONLY[lang]))
        else:
            sentences.append(rng.choice(PLAIN[lang]))
    if with_pii and not any(s in PII[lang] for s in sentences):
        sentences.insert(1 + rng.randrange(len(sentences)), rng.choice(PII[lang]))
    sentences.append(rng.choice(CLOSINGS[lang]))
    joiner = "" if lang == "ja" else rng.choice([" ", "\n", " "])
    return joiner.join(sentences)


def corpus(size: int, seed: int) -> list[base.Snippet]:
    rng = random.Random(seed)
    return [base.build(paragraph(rng), rng, TRUE, NEAR) for _ in range(size)]
